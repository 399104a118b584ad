import { AppError } from '@svc/errors';
import Fastify from 'fastify';
import pino from 'pino';
import { bearerChallenge, sendError } from './error-reply';

describe('401 challenges (RFC 6750, section 3)', () => {
  it('names the Bearer scheme, with error="invalid_token" only when a credential was sent, never echoing it', () => {
    expect(bearerChallenge(undefined)).toBe('Bearer');
    expect(bearerChallenge('')).toBe('Bearer');
    expect(bearerChallenge('Bearer svc-secret')).toBe('Bearer error="invalid_token"');
    expect(bearerChallenge('Bearer svc-secret')).not.toContain('svc-secret');
    expect(bearerChallenge(undefined, { resource_metadata: 'https://h/.well-known/x' })).toBe('Bearer resource_metadata="https://h/.well-known/x"');
    expect(bearerChallenge('x', { resource_metadata: 'https://h/"a' })).toBe('Bearer resource_metadata="https://h/a", error="invalid_token"');
  });

  it('sendError puts it on every 401 and on nothing else, and keeps a challenge the route set', async () => {
    const app = Fastify();
    const log = pino({ level: 'silent' });
    app.get('/401', (request, reply) => sendError(reply, request.id, new AppError('invalid_api_key', 'the API key is not valid'), log));
    app.get('/403', (request, reply) => sendError(reply, request.id, new AppError('wrong_key_type', 'no'), log));
    app.get('/own', (request, reply) => sendError(reply.header('www-authenticate', 'Bearer resource_metadata="m"'), request.id, new AppError('invalid_api_key', 'x'), log));
    const none = await app.inject({ method: 'GET', url: '/401' });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const sent = await app.inject({ method: 'GET', url: '/401', headers: { authorization: 'Bearer svc-nope' } });
    expect(sent.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    const forbidden = await app.inject({ method: 'GET', url: '/403', headers: { authorization: 'Bearer svc-nope' } });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.headers['www-authenticate']).toBeUndefined();
    const own = await app.inject({ method: 'GET', url: '/own' });
    expect(own.headers['www-authenticate']).toBe('Bearer resource_metadata="m"');
    await app.close();
  });
});
