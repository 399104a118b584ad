export { createServiceLogger, errText } from './logger';
export type { ServiceLoggerOptions } from './logger';
export { LOG_SCHEMA, FORBIDDEN_FIELDS, checkLogLine } from './log-schema';
