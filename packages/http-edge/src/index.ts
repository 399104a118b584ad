export { installEdge, edgeServerOptions, clientErrorReply, isWellFormedQuery, MAX_PARAM_LENGTH } from './edge';
export type { EdgeSettings, EdgeServerOptions, AccessLogFields, EdgeOptions, ResponseObserver, EdgeTracing } from './edge';
export { DrainState, drainingReadiness, stopOnSignals } from './drain';
export type { DrainingReadiness, StopOnSignalsOptions } from './drain';
export { toErrorReply, sendError, rawErrorResponse, describeFault, bearerChallenge } from './error-reply';
export type { EdgeErrorReply } from './error-reply';
export { EdgeExceptionFilter } from './edge-exception.filter';
export { RouteTable } from './route-table';
export { freshRequestIds, trustedRequestIds, isInternal } from './request-ids';
export type { RequestIdSource } from './request-ids';
export { secretsEqual, headerValue } from './secrets-equal';
export { DtoValidationPipe, describeValidationErrors, validateDto } from './validation/validation.pipe';
export {
  IsUsdAmount, IsFutureTimestamp, IsCalendarDate, IsIntegerText, IsCursor, IsText, IsStringList, IsTimestamp, NoNullCharacter,
  parseRfc3339, isCalendarDate, isEmailAddress, isWellFormedText, hasNullCharacter, isRepresentableTime, encodeTimeIdCursor, decodeTimeIdCursor, MAX_DATE_MS, PageQueryDto, pageLimit, DEFAULT_PAGE_LIMIT,
} from './validation/validators';
export type { TimeIdPosition, UsdAmountOptions } from './validation/validators';
export { TextField, StringField, StringListField, UsdField, EnumField, BooleanField, FutureTimestampField, TimestampField, CalendarDateField, IdField, UrlField, idPattern, EnumListField } from './validation/fields';
export type { FieldOptions, Presence, StringFieldOptions } from './validation/fields';
export { internalCaller } from './internal-caller';
export type { InternalCaller } from './internal-caller';
export { Public, PublicController, PUBLIC_ROUTE, PUBLIC_ROUTE_CONFIG, guardHook, isUnguardedFastifyRoute, unguardedNestRoutes, ROUTE_ACCESS, DeclareAccess, KeyedGuard, declaredAccess, undeclaredAccessRoutes } from './route-access';
export type { RouteOptionsSeen, RouteAccess } from './route-access';
export { DEFAULT_MAX_BODY_DEPTH, FORBIDDEN_KEYS, bodyDepthExceeds, checkBodyDepth, parseJsonBody, forbiddenKeyPath, tooDeepError, installJsonBodyParser } from './body/json-body';
export type { JsonBodyParserOptions } from './body/json-body';
export { AddressList, clientAddress, normalizeAddress, parseCidr, parseTrustedProxies, requestClientAddress } from './client-address';
export type { AddressFamily, Cidr } from './client-address';
export { AuditLogQueryDto, toAuditLogQuery, encodeAuditCursor, decodeAuditCursor, auditPageSql, newestFirst } from './audit-query';
export type { AuditFilters, AuditLogQuery, AuditPosition } from './audit-query';
