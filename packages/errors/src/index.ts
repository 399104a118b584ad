export { AppError, ERROR_CODES, httpStatusOf, grpcStatusOf, isErrorCode } from './app-error';
export type { ErrorCode, AttemptView, ErrorExtra } from './app-error';
export { errorBody, routeNotFoundBody, methodNotAllowedBody } from './error-body';
export type { ErrorBody } from './error-body';
export { describeError } from './describe-error';
