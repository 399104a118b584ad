// Validates Kubernetes objects against the API's own schemas (the kubernetes-models package:
// classes generated from the Kubernetes OpenAPI definitions, each with a compiled JSON-schema
// validator). Reads a JSON array of objects on stdin; prints a JSON array of
// { kind, name, error } for every object that does not validate or has no schema here.
// Run as a plain ES module by Node (the package ships ES modules only).
const input = JSON.parse(await new Promise((resolve) => {
  let text = '';
  process.stdin.on('data', (c) => (text += c));
  process.stdin.on('end', () => resolve(text));
}));

const problems = [];
for (const doc of input) {
  const [group, version] = doc.apiVersion.includes('/') ? doc.apiVersion.split('/') : [null, doc.apiVersion];
  const module = group === null ? `kubernetes-models/${version}/${doc.kind}` : `kubernetes-models/${group}/${version}/${doc.kind}`;
  const name = doc.metadata?.name ?? '(unnamed)';
  let Model;
  try {
    Model = (await import(module))[doc.kind];
  } catch {
    problems.push({ kind: doc.kind, name, error: `no schema for ${doc.apiVersion} ${doc.kind}` });
    continue;
  }
  try {
    new Model(doc).validate();
  } catch (error) {
    problems.push({ kind: doc.kind, name, error: String(error?.message ?? error) });
  }
}
process.stdout.write(JSON.stringify(problems));
