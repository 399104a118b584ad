export {
  createRedisClient, closeRedisClient, isCluster, masters, scanKeys, KeyspaceWalk, splitRedisUrls, parseRedisEndpoint, redisEndpoints,
  RedisUrlError, DEFAULT_SLOTS_REFRESH_INTERVAL_MS, mgetAny, pipelineEach,
} from './redis-client';
export type { RedisClient, RedisEndpoint, RedisTarget, RedisClientOptions, ClusterOnlyOptions, PipelineReplies, WalkStep } from './redis-client';
export { keySlot, CLUSTER_SLOTS } from './slots';
export { shardKeys, slotTag } from './shards';
export { integerReply } from './replies';
