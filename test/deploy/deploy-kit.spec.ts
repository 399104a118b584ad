import { envSchemaFromSource, interpolations, parseManifests, resolveContainerEnv } from './deploy-kit';

describe('the deployment test kit reads what it checks', () => {
  it('reads required, optional and secret variables from an env schema', () => {
    const source = `
      import { int, secret, str, url } from '@svc/config';
      export const schema = {
        PORT: int({ default: 8080, min: 0 }),
        DATABASE_URL: url({ protocols: ['postgresql'] }),
        INTERNAL_TOKEN: secret({ minLength: 16 }),
        BRAVE_API_KEY: secret({ optional: true }),
        NAME: str({ optional: true }),
        notAnEnvVar: str(),
      };`;
    expect(envSchemaFromSource(source)).toEqual([
      { name: 'PORT', required: false, secret: false },
      { name: 'DATABASE_URL', required: true, secret: false },
      { name: 'INTERNAL_TOKEN', required: true, secret: true },
      { name: 'BRAVE_API_KEY', required: false, secret: true },
      { name: 'NAME', required: false, secret: false },
    ]);
  });

  it('finds compose interpolations with and without defaults', () => {
    expect(interpolations('a ${A:?set A} b ${B:-x} c ${C} d ${D-y}')).toEqual([
      { name: 'A', hasDefault: false, required: true },
      { name: 'B', hasDefault: true, required: false },
      { name: 'C', hasDefault: false, required: false },
      { name: 'D', hasDefault: true, required: false },
    ]);
  });

  it('reports a container whose ConfigMap, Secret or key is missing', () => {
    const [configMap] = parseManifests('cm.yaml', 'kind: ConfigMap\nmetadata: {name: cm}\ndata: {PORT: "1"}\n');
    const [secret] = parseManifests('s.yaml', 'kind: Secret\nmetadata: {name: s}\nstringData: {TOKEN: REPLACE_ME}\n');
    if (configMap === undefined || secret === undefined) throw new Error('fixtures did not parse');
    const container = {
      envFrom: [{ configMapRef: { name: 'cm' } }, { secretRef: { name: 'absent' } }],
      env: [
        { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 's', key: 'TOKEN' } } },
        { name: 'OTHER', valueFrom: { secretKeyRef: { name: 's', key: 'OTHER' } } },
        { name: 'LOG_LEVEL', value: 'info' },
      ],
    };
    const { env, problems } = resolveContainerEnv(container, [configMap], [secret], 'c');
    expect(Object.fromEntries(env)).toEqual({ PORT: 'configmap', TOKEN: 'secret', OTHER: 'secret', LOG_LEVEL: 'literal' });
    expect(problems).toEqual([
      'c: secret absent does not exist',
      'c: OTHER needs key OTHER of secret s, which does not exist',
    ]);
  });
});
