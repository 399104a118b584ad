/**
 * The dashboard: one self-contained page (inline script and style, no external assets, no
 * build step). It calls the dashboard API with the session cookie and x-csrf-token, and
 * /v1/keys through the gateway with a management key the user pastes (never stored).
 * Untrusted text is written with textContent only.
 */
export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Search gateway dashboard</title>
<style>
body{font:15px system-ui,sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem;color:#222}
section{border:1px solid #ddd;border-radius:6px;padding:1rem;margin:1rem 0}
input{padding:.3rem;margin:.2rem}button{padding:.3rem .7rem;margin:.2rem}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:.3rem;text-align:left}
.secret{background:#ffe;padding:.5rem;word-break:break-all}.err{color:#b00}[hidden]{display:none}
</style></head><body>
<h1>Search gateway</h1>
<p id="msg" class="err"></p>
<section id="auth"><h2>Sign in</h2>
<input id="email" type="email" placeholder="email" autocomplete="username">
<input id="password" type="password" placeholder="password (12+ characters)" autocomplete="current-password">
<button id="login">Log in</button><button id="signup">Sign up</button></section>
<div id="app" hidden>
<p>Signed in as <b id="who"></b> (<span id="acct"></span>) <button id="logout">Log out</button></p>
<section><h2>Management keys</h2>
<input id="mname" placeholder="name"><button id="mcreate">Create</button>
<p id="msecret" class="secret" hidden></p><table><tbody id="mkeys"></tbody></table></section>
<section><h2>API keys</h2>
<p>Paste a management key to manage API keys (kept in this page only).</p>
<input id="mkey" type="password" placeholder="svc-mgmt-..." size="50"><button id="kload">Load</button><br>
<input id="kname" placeholder="name"><input id="klimit" type="number" step="0.000001" min="0" placeholder="limit USD (optional)">
<select id="kreset"><option value="">no reset</option><option>daily</option><option>weekly</option><option>monthly</option></select>
<button id="kcreate">Create API key</button>
<p id="ksecret" class="secret" hidden></p><table><tbody id="keys"></tbody></table></section>
</div>
<script>
"use strict";
let csrf = sessionStorage.getItem("csrf") || "";
const $ = (id) => document.getElementById(id);
function say(text) { $("msg").textContent = text || ""; }
async function api(method, path, body, headers) {
  const h = Object.assign({}, headers || {});
  if (body !== undefined) h["content-type"] = "application/json";
  if (method !== "GET" && csrf) h["x-csrf-token"] = csrf;
  const r = await fetch(path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin" });
  const data = r.status === 204 ? {} : await r.json().catch(() => ({}));
  if (!r.ok) throw new Error((data.error && data.error.message) || ("HTTP " + r.status));
  return data;
}
function row(tbody, cells, onDelete) {
  const tr = document.createElement("tr");
  for (const c of cells) { const td = document.createElement("td"); td.textContent = c; tr.appendChild(td); }
  const td = document.createElement("td"); const b = document.createElement("button");
  b.textContent = "Delete"; b.onclick = () => onDelete().catch((e) => say(e.message)); td.appendChild(b); tr.appendChild(td);
  tbody.appendChild(tr);
}
function showSecret(el, secret) { el.hidden = false; el.textContent = "Copy this secret now, it is shown only once: " + secret; }
async function signedIn(data) {
  if (data.csrf_token) { csrf = data.csrf_token; sessionStorage.setItem("csrf", csrf); }
  $("auth").hidden = true; $("app").hidden = false;
  $("who").textContent = data.email; $("acct").textContent = data.account_id;
  await loadManagementKeys();
}
async function loadManagementKeys() {
  const list = await api("GET", "/dashboard/api/management-keys");
  const tbody = $("mkeys"); tbody.replaceChildren();
  for (const k of list.data) row(tbody, [k.name, k.label, k.created_at], async () => {
    await api("DELETE", "/dashboard/api/management-keys/" + encodeURIComponent(k.id)); await loadManagementKeys();
  });
}
function bearer() { return { authorization: "Bearer " + $("mkey").value.trim() }; }
async function loadKeys() {
  const tbody = $("keys"); tbody.replaceChildren();
  let cursor = null;
  do {
    const page = await api("GET", "/v1/keys?limit=100" + (cursor ? "&cursor=" + encodeURIComponent(cursor) : ""), undefined, bearer());
    for (const k of page.data) row(tbody, [k.name, k.label, k.limit_usd === null ? "no limit" : k.limit_usd + " USD " + (k.limit_reset || ""), "used " + k.usage_usd + " USD", k.disabled ? "disabled" : "enabled"], async () => {
      await api("DELETE", "/v1/keys/" + encodeURIComponent(k.id), undefined, bearer()); await loadKeys();
    });
    cursor = page.next_cursor;
  } while (cursor);
}
function credentials() { return { email: $("email").value, password: $("password").value }; }
function run(fn) { return () => { say(""); fn().catch((e) => say(e.message)); }; }
$("login").onclick = run(async () => signedIn(await api("POST", "/dashboard/api/login", credentials())));
$("signup").onclick = run(async () => signedIn(await api("POST", "/dashboard/api/signup", credentials())));
$("logout").onclick = run(async () => { await api("POST", "/dashboard/api/logout"); sessionStorage.removeItem("csrf"); location.reload(); });
$("mcreate").onclick = run(async () => {
  const body = $("mname").value ? { name: $("mname").value } : {};
  const k = await api("POST", "/dashboard/api/management-keys", body); showSecret($("msecret"), k.secret); await loadManagementKeys();
});
$("kload").onclick = run(loadKeys);
$("kcreate").onclick = run(async () => {
  const body = {};
  if ($("kname").value) body.name = $("kname").value;
  if ($("klimit").value) body.limit_usd = Number($("klimit").value);
  if ($("kreset").value) body.limit_reset = $("kreset").value;
  const k = await api("POST", "/v1/keys", body, bearer()); showSecret($("ksecret"), k.secret); await loadKeys();
});
api("GET", "/dashboard/api/me").then(signedIn, () => undefined);
</script></body></html>
`;
