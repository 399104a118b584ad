/**
 * What other workspaces may take from account-admin (its package entry point; the service
 * itself starts from main.ts): the DTOs and paths that tools/openapi writes the OpenAPI
 * document from, and the key answer type the contract tests check against @svc/contracts.
 */
export { DASHBOARD_PAGES } from './dashboard/dashboard-web.controller';
export { ConfirmSignupDto, LoginDto, PasswordResetDto, PasswordResetRequestDto, SignupDto } from './sessions/sessions.dto';
export { NotificationSettingDto } from './notifications/notifications.dto';
export { ManagementKeyCreateDto, ManagementKeyUpdateDto } from './keys/management-keys.dto';
export { KeyBodyDto, ListQueryDto } from './keys/keys.dto';
export { PutProviderKeyDto } from './provider-keys/provider-keys.dto';
export type { KeyView } from './keys/keys.service';
export { ConsentDto } from './oauth/oauth.dto';
