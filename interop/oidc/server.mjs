// A strict OpenID Connect authorization server for tako's interop tests:
// panva's oidc-provider (OpenID Certified), configured as a careful
// operator would run it in front of one MCP server, with login and
// consent pages a person fills in. It is "a strict real server rather
// than the friendliest one": everything a client may get wrong here, a
// production server will also refuse.
//
//   node interop/oidc/server.mjs --resource http://127.0.0.1:PORT/mcp \
//        [--port 0] [--user alice] [--password PASSWORD]
//
// It listens on 127.0.0.1 only. Its first line on stdout is
//   {"event":"ready","issuer":"http://127.0.0.1:PORT"}
// and every later line is one JSON event (a request to the token,
// revocation or registration endpoint, a refresh token consumed, a grant
// revoked, a login), which the tests count; POST /.tako/mark?id=N writes
// {"event":"mark","id":"N"}, so that a test knows it has read every event
// before it. oidc-provider's own notices go to stderr. It exits when its stdin reaches end of file, so it never
// outlives the test that started it.
//
// What this configuration demands of a client (found by reading
// oidc-provider 9.13.3's source and by trying it):
//
//   - Discovery at /.well-known/openid-configuration and
//     /.well-known/oauth-authorization-server (the same document).
//     scopes_supported: openid, offline_access, mcp:read, mcp:write.
//   - Registration (RFC 7591) is open, without an initial access token.
//     application_type defaults to "web", for which a redirect URI must
//     match exactly; only a "native" client may use any loopback port for
//     a registered http://127.0.0.1/... URI (RFC 8252 §7.3), and a native
//     client is asked for consent on every authorization. An empty
//     application_type is invalid_client_metadata. A registered "scope"
//     may hold only scopes_supported values, and restricts what the
//     client may ask for later: asking for offline_access, or for
//     mcp:write at a step-up, outside it is invalid_scope at the
//     authorization endpoint. grant_types must include refresh_token for
//     any refresh token.
//   - PKCE with S256 on every authorization request, public or
//     confidential client.
//   - redirect_uri on every authorization request, even with one
//     registered.
//   - A refresh token only when the scope has offline_access AND the
//     request has prompt=consent (OpenID Connect Core §11); otherwise
//     offline_access is dropped without an error, and no refresh token
//     comes.
//   - openid is not required: without it the request is plain OAuth 2.0
//     and no ID token is issued.
//   - The authorization response carries iss (RFC 9207).
//   - RFC 8707: the resource parameter names the MCP server on the
//     authorization request and on the token request (one value per token
//     request). An unknown resource is invalid_target. Without a resource,
//     resource scopes are dropped and the access token is an opaque one
//     for the userinfo endpoint, which the MCP server refuses.
//   - Access tokens for the resource are JWTs (RFC 9068: typ at+jwt,
//     ES256, aud = the resource, scope = the resource scopes granted,
//     client_id, jti) that live 20 seconds.
//   - Refresh tokens rotate on every use. A refresh token used a second
//     time is treated as stolen: the request fails with invalid_grant and
//     the whole grant is revoked, the fresh tokens included.
//   - A refresh may narrow the scope, never widen it (invalid_scope);
//     widening takes a new authorization.
//   - Revocation (RFC 7009) of a refresh token revokes its grant. A JWT
//     access token cannot be revoked: the endpoint answers 400
//     unsupported_token_type.
//   - DPoP (RFC 9449) is offered, not required; a DPoP-bound refresh
//     token must be used with a proof from the same key.

import { createServer } from 'node:http';
import { generateKeyPairSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { parseArgs } from 'node:util';

import Provider, { errors } from 'oidc-provider';

// oidc-provider prints its notices with console.info, which is stdout:
// stdout carries the events, so everything else goes to stderr.
console.info = (...args) => console.error(...args);
console.log = (...args) => console.error(...args);

const { values: opts } = parseArgs({
  options: {
    resource: { type: 'string' },
    port: { type: 'string', default: '0' },
    user: { type: 'string', default: 'alice' },
    password: { type: 'string', default: 'correct horse battery staple' },
  },
});
if (!opts.resource) {
  console.error('usage: server.mjs --resource URL [--port N] [--user NAME] [--password PASSWORD]');
  process.exit(2);
}
const resource = new URL(opts.resource).href;

// The scopes of the MCP resource: mcp:read for every request, mcp:write
// for the tools that change something (the step-up).
const resourceScopes = 'mcp:read mcp:write';
const accessTokenTTL = 20;

function emit(event, fields = {}) {
  process.stdout.write(`${JSON.stringify({ event, t: Date.now(), ...fields })}\n`);
}

// Signing keys made at start: ES256 for access tokens, RS256 for ID tokens
// (the OpenID default).
function signingKey(type, alg, params) {
  const { privateKey } = generateKeyPairSync(type, params);
  return { ...privateKey.export({ format: 'jwk' }), alg, use: 'sig', kid: `${alg.toLowerCase()}-${randomBytes(4).toString('hex')}` };
}

const server = createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(Number(opts.port), '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  jwks: {
    keys: [
      signingKey('ec', 'ES256', { namedCurve: 'P-256' }),
      signingKey('rsa', 'RS256', { modulusLength: 2048 }),
    ],
  },
  cookies: { keys: [randomBytes(32).toString('base64url')] },

  // The one account: a person signs in with its name and password.
  async findAccount(_ctx, sub) {
    if (sub !== opts.user) return undefined;
    return { accountId: sub, async claims() { return { sub }; } };
  },
  // The MCP scopes are listed here too, so that they are in
  // scopes_supported and a client may register them; each is also the
  // resource's (getResourceServerInfo), which puts it in the access token.
  scopes: ['openid', 'offline_access', 'mcp:read', 'mcp:write'],
  claims: { openid: ['sub'] },
  responseTypes: ['code'],
  pkce: { required: () => true },
  allowOmittingSingleRegisteredRedirectUri: false,
  rotateRefreshToken: true,
  ttl: {
    AccessToken: accessTokenTTL,
    AuthorizationCode: 60,
    IdToken: 3600,
    Interaction: 600,
    Session: 3600,
    Grant: 24 * 3600,
    RefreshToken: 24 * 3600,
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true, initialAccessToken: false },
    revocation: { enabled: true },
    dPoP: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // No default: a client must name the resource.
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: () => false,
      async getResourceServerInfo(_ctx, indicator) {
        if (indicator !== resource) {
          throw new errors.InvalidTarget(`unknown resource ${indicator}`);
        }
        return {
          scope: resourceScopes,
          audience: resource,
          accessTokenTTL,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
  },
  async renderError(ctx, out) {
    ctx.type = 'html';
    ctx.body = page('Sign-in error', `<h1>Something went wrong</h1>
<p>${esc(out.error)}: ${esc(out.error_description ?? '')}</p>`);
  },
});
provider.proxy = false;

// What the tests count: each request to the token, revocation and
// registration endpoints, after the provider answered it.
const counted = new Set(['token', 'revocation', 'registration']);
provider.use(async (ctx, next) => {
  await next();
  const route = ctx.oidc?.route;
  if (!counted.has(route)) return;
  const p = ctx.oidc.params ?? {};
  const body = typeof ctx.body === 'object' && ctx.body !== null ? ctx.body : {};
  emit('request', {
    route,
    status: ctx.status,
    grant_type: p.grant_type,
    token_type_hint: p.token_type_hint,
    scope: p.scope,
    resource: [].concat(p.resource ?? []).join(' ') || undefined,
    client_id: ctx.oidc.client?.clientId ?? body.client_id,
    dpop: Boolean(ctx.get('DPoP')),
    error: body.error,
    error_description: body.error_description,
    granted_scope: body.scope,
    refresh_token_issued: Boolean(body.refresh_token),
    // The registration request as the client sent it.
    registered: route === 'registration' ? {
      application_type: body.application_type,
      redirect_uris: body.redirect_uris,
      grant_types: body.grant_types,
      scope: body.scope,
      token_endpoint_auth_method: body.token_endpoint_auth_method,
    } : undefined,
  });
});
provider.on('authorization.success', (ctx) => {
  const p = ctx.oidc.params;
  emit('authorization', {
    client_id: p.client_id,
    scope: p.scope,
    prompt: p.prompt,
    resource: [].concat(p.resource ?? []).join(' ') || undefined,
    redirect_uri: p.redirect_uri,
  });
});
provider.on('authorization.error', (ctx, err) => {
  emit('authorization_error', { client_id: ctx.oidc?.params?.client_id, error: err.error, error_description: err.error_description });
});
// Why a token request failed, in words the response does not carry
// (error_detail): "refresh token already used" is the reuse detection.
provider.on('grant.error', (ctx, err) => {
  emit('token_error', {
    grant_type: ctx.oidc?.params?.grant_type,
    client_id: ctx.oidc?.client?.clientId,
    error: err.error,
    detail: err.error_detail ?? err.error_description,
  });
});
provider.on('refresh_token.consumed', (token) => emit('refresh_token_consumed', { grant: token.grantId }));
provider.on('refresh_token.destroyed', (token) => emit('refresh_token_destroyed', { grant: token.grantId }));
provider.on('grant.revoked', (_ctx, grantId) => emit('grant_revoked', { grant: grantId }));
provider.on('server_error', (_ctx, err) => {
  console.error('server_error', err);
  emit('server_error', { message: String(err?.message ?? err) });
});

// The interaction pages: real HTML forms, without script, that a person
// reads, fills in and submits. The interaction is bound to the browser by
// oidc-provider's interaction cookie.
function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title, body) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>body{font-family:sans-serif;max-width:30em;margin:3em auto}label{display:block;margin:.6em 0}
input{font-size:1em;padding:.3em;width:100%}button{font-size:1em;margin:.6em .6em 0 0;padding:.4em 1em}
.error{color:#b00}</style></head>
<body>${body}</body></html>`;
}

function loginPage(uid, clientName, error) {
  return page('Sign in to the tako test provider', `<h1>Sign in</h1>
<p>${esc(clientName)} wants to use your account at ${esc(issuer)}.</p>
${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form method="post" action="/interaction/${esc(uid)}/login" autocomplete="off">
<label>User name <input id="username" name="username" required autofocus></label>
<label>Password <input id="password" name="password" type="password" required></label>
<button id="signin" type="submit">Sign in</button>
</form>`);
}

function consentPage(uid, clientName, details, params) {
  const scopes = new Set();
  for (const s of details.missingOIDCScope ?? []) scopes.add(s);
  for (const list of Object.values(details.missingResourceScopes ?? {})) for (const s of list) scopes.add(s);
  const offline = String(params.scope ?? '').split(' ').includes('offline_access');
  const items = [...scopes].map((s) => `<li><code>${esc(s)}</code></li>`).join('\n');
  return page('Allow access?', `<h1>Allow access?</h1>
<p>${esc(clientName)} asks for access to ${esc(params.resource ?? 'your account')}:</p>
<ul id="scopes">
${items || '<li>the access you gave it before</li>'}
</ul>
${offline ? '<p>It also asks to keep this access while you are away (a refresh token).</p>' : ''}
<form method="post" action="/interaction/${esc(uid)}/confirm">
<button id="allow" type="submit" name="decision" value="allow">Allow</button>
<button id="deny" type="submit" name="decision" value="deny">Deny</button>
</form>`);
}

async function readForm(req) {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 16 << 10) throw new Error('form too large');
  }
  return new URLSearchParams(body);
}

function sameSecret(a, b) {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function send(res, status, html) {
  res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(html);
}

async function interaction(req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) {
    send(res, 400, page('Sign-in error', '<h1>This sign-in has expired</h1><p>Start again from the application.</p>'));
    return;
  }
  const { prompt, params } = details;
  const client = await provider.Client.find(params.client_id);
  const clientName = client?.clientName || params.client_id;
  if (req.method === 'GET' && action === '') {
    if (prompt.name === 'login') {
      send(res, 200, loginPage(uid, clientName));
    } else if (prompt.name === 'consent') {
      send(res, 200, consentPage(uid, clientName, prompt.details, params));
    } else {
      send(res, 501, page('Sign-in error', `<p>unknown prompt ${esc(prompt.name)}</p>`));
    }
    return;
  }
  if (req.method !== 'POST') {
    send(res, 405, page('Sign-in error', '<p>method not allowed</p>'));
    return;
  }
  const form = await readForm(req);
  if (action === 'login' && prompt.name === 'login') {
    const user = form.get('username') ?? '';
    if (user !== opts.user || !sameSecret(form.get('password') ?? '', opts.password)) {
      emit('login_failed', { user });
      send(res, 200, loginPage(uid, clientName, 'Wrong user name or password.'));
      return;
    }
    emit('login', { user });
    await provider.interactionFinished(req, res, { login: { accountId: user } }, { mergeWithLastSubmission: false });
    return;
  }
  if (action === 'confirm' && prompt.name === 'consent') {
    if (form.get('decision') !== 'allow') {
      emit('consent_denied', { client_id: params.client_id });
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'the user denied access' }, { mergeWithLastSubmission: false });
      return;
    }
    const d = prompt.details;
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
    if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
    if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
    for (const [indicator, list] of Object.entries(d.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, list.join(' '));
    }
    const grantId = await grant.save();
    emit('consent', { client_id: params.client_id, scope: params.scope, grant: grantId });
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return;
  }
  send(res, 400, page('Sign-in error', '<p>This form does not belong to this step of the sign-in.</p>'));
}

const callback = provider.callback();
const interactionPath = /^\/interaction\/([\w-]+)(?:\/(login|confirm))?$/;
server.on('request', (req, res) => {
  const { pathname, searchParams } = new URL(req.url, issuer);
  // The tests' synchronisation point: once they read this mark on stdout,
  // they have read every event before it.
  if (pathname === '/.tako/mark' && req.method === 'POST') {
    emit('mark', { id: searchParams.get('id') });
    res.writeHead(204);
    res.end();
    return;
  }
  const m = interactionPath.exec(pathname);
  if (!m) {
    callback(req, res);
    return;
  }
  interaction(req, res, m[1], m[2] ?? '').catch((err) => {
    // A missing or expired interaction cookie is the user's, not a bug.
    const status = err instanceof errors.SessionNotFound ? 400 : 500;
    if (status === 500) console.error('interaction:', err);
    if (!res.headersSent) send(res, status, page('Sign-in error', `<h1>Sign-in failed</h1><p>${esc(err.message)}</p>`));
    else res.end();
  });
});

emit('ready', { issuer, resource });

process.stdin.resume();
process.stdin.on('end', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
