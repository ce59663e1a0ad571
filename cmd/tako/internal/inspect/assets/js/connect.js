// The servers: the list at the side (which are shown side by side), each
// panel's header (state, reconnect, log in), and the connect form, whose
// commands run only once the person confirms them.
'use strict';

(() => {
  const {el} = T;
  const kinds = {stdio: 'stdio', http: 'HTTP', sse: 'SSE', ws: 'WebSocket', grpc: 'gRPC'};

  T.renderServerList = () => {
    const ul = document.getElementById('serverlist');
    T.clear(ul);
    for (const s of T.servers.values()) {
      const id = `show-${s.sum.id}`;
      ul.append(el('li', {class: 'srv'},
        el('input', {type: 'checkbox', id, checked: T.shown.has(s.sum.id), onchange: (e) => {
          if (e.target.checked) T.shown.add(s.sum.id); else T.shown.delete(s.sum.id);
          T.layout();
        }}),
        el('label', {for: id}, el('span', {class: `dot ${s.sum.state}`, 'aria-hidden': 'true'}), s.sum.name,
          el('span', {class: 'kind'}, kinds[s.sum.kind] || s.sum.kind), el('span', {class: 'sr'}, `, ${s.sum.state}`))));
    }
  };

  T.renderHeader = (s) => {
    const sum = s.sum;
    const actions = el('div', {class: 'actions'});
    const act = (label, f, title) => actions.append(el('button', {type: 'button', title: title || label, onclick: f}, label));
    if (sum.state === 'connected') {
      act('Disconnect', () => T.post(T.srvPath(sum.id, '/disconnect')).catch(T.fail('Disconnect')));
    } else if (sum.state !== 'connecting' && sum.state !== 'login') {
      act('Reconnect', () => T.post(T.srvPath(sum.id, '/reconnect')).catch(T.fail('Reconnect')));
    } else {
      act('Cancel', () => T.post(T.srvPath(sum.id, '/disconnect')).catch(T.fail('Cancel')));
    }
    if (sum.features && sum.features.oauth) act('Log in', () => T.post(T.srvPath(sum.id, '/login')).then(() => T.say(`Logging in to ${sum.name}…`)).catch(T.fail('Log in')), 'Run a new OAuth login');
    act('Remove', () => T.post(T.srvPath(sum.id, '/close')).catch(T.fail('Remove')), 'Close the connection and remove the server');
    const info = sum.info ? `${sum.info.serverInfo.name} ${sum.info.serverInfo.version || ''} · ${sum.info.protocolVersion}` : '';
    T.clear(s.head,
      el('h2', {}, el('span', {class: `dot ${sum.state}`, 'aria-hidden': 'true'}), sum.name),
      el('div', {class: 'target', title: sum.target}, `${kinds[sum.kind] || sum.kind} ${sum.target}`),
      el('div', {class: 'pstate', 'data-state': sum.state}, sum.state, info ? ` · ${info}` : ''),
      sum.error ? el('div', {class: 'error', role: 'alert'}, sum.error) : null,
      sum.loginURL ? el('div', {class: 'login', role: 'alert'}, 'The server wants a login: ',
        el('a', {href: sum.loginURL, target: '_blank', rel: 'noopener noreferrer', class: 'loginlink'}, 'open the authorization page'),
        ' and come back here when it is done.') : null,
      actions);
  };

  // The connect form. A URL connects at once; a command comes back to be
  // confirmed (confirm()).
  const form = () => {
    const id = T.uid('cf');
    const kind = el('select', {id: id + '-kind', name: 'kind'},
      Object.entries(kinds).map(([k, v]) => el('option', {value: k}, v)));
    const cmd = el('input', {id: id + '-cmd', name: 'command', class: 'wide', placeholder: 'npx -y @modelcontextprotocol/server-everything'});
    const url = el('input', {id: id + '-url', name: 'url', class: 'wide', placeholder: 'http://127.0.0.1:3001/mcp'});
    const name = el('input', {id: id + '-name', name: 'name', placeholder: 'optional'});
    const env = el('textarea', {id: id + '-env', name: 'env', rows: 2, placeholder: 'KEY=VALUE, one a line'});
    const hdr = el('textarea', {id: id + '-hdr', name: 'headers', rows: 2, placeholder: 'Name: value, one a line'});
    const tls = {};
    const tlsBox = el('fieldset', {class: 'tls'}, el('legend', {}, 'gRPC TLS'),
      ['ca', 'cert', 'key', 'serverName'].map((k) => {
        tls[k] = el('input', {id: `${id}-${k}`, placeholder: k === 'serverName' ? 'name in the certificate' : 'PEM file path'});
        return el('div', {class: 'row'}, el('label', {for: `${id}-${k}`}, {ca: 'CA file', cert: 'Client certificate', key: 'Client key', serverName: 'Server name'}[k]), tls[k]);
      }),
      el('div', {class: 'row'}, tls.plain = el('input', {type: 'checkbox', id: id + '-plain'}), el('label', {for: id + '-plain'}, 'Plaintext (no TLS)')));
    const rows = {
      cmd: el('div', {class: 'row'}, el('label', {for: cmd.id}, 'Command'), cmd),
      url: el('div', {class: 'row'}, el('label', {for: url.id}, 'URL'), url),
      env: el('div', {class: 'row'}, el('label', {for: env.id}, 'Environment'), env),
      hdr: el('div', {class: 'row'}, el('label', {for: hdr.id}, 'Headers'), hdr),
    };
    const sync = () => {
      const k = kind.value;
      rows.cmd.hidden = k !== 'stdio';
      rows.env.hidden = k !== 'stdio';
      rows.url.hidden = k === 'stdio';
      rows.hdr.hidden = k === 'stdio' || k === 'grpc';
      tlsBox.hidden = k !== 'grpc';
      url.placeholder = {http: 'http://127.0.0.1:3001/mcp', sse: 'http://127.0.0.1:3001/sse', ws: 'ws://127.0.0.1:8765/mcp', grpc: '127.0.0.1:8443'}[k] || '';
    };
    kind.addEventListener('change', sync);
    sync();
    const submit = el('button', {type: 'submit', class: 'primary'}, 'Connect');
    const f = el('form', {class: 'connect', onsubmit: async (e) => {
      e.preventDefault();
      const body = {kind: kind.value, command: cmd.value, url: url.value, name: name.value,
        env: env.value.split('\n').map((l) => l.trim()).filter(Boolean),
        headers: hdr.value.split('\n').map((l) => l.trim()).filter(Boolean).map((l) => { const i = l.indexOf(':'); return i < 0 ? [l, ''] : [l.slice(0, i), l.slice(i + 1)]; })};
      if (kind.value === 'grpc') body.tls = {ca: tls.ca.value, cert: tls.cert.value, key: tls.key.value, serverName: tls.serverName.value, plaintext: tls.plain.checked};
      submit.disabled = true;
      try {
        const r = await T.post('/api/servers', body);
        if (r.confirm) await confirm(r.confirm);
        else T.say(`Connecting to ${r.name}…`);
        const dlg = document.getElementById('connect');
        if (dlg.open) dlg.close();
      } catch (err) {
        T.say('Connect: ' + err.message, true);
      } finally {
        submit.disabled = false;
      }
    }},
    el('div', {class: 'row'}, el('label', {for: kind.id}, 'Transport'), kind),
    rows.cmd, rows.url, el('div', {class: 'row'}, el('label', {for: name.id}, 'Name'), name), rows.env, rows.hdr, tlsBox,
    el('div', {class: 'buttons'}, submit));
    return f;
  };

  // confirm shows exactly what would run and runs it only when the
  // person says so.
  const confirm = T.confirmCommand = (c) => new Promise((resolve) => {
    const dlg = document.getElementById('confirm');
    const run = el('button', {type: 'button', class: 'danger', id: 'confirm-run'}, 'Run this command');
    const cancel = el('button', {type: 'button', id: 'confirm-cancel'}, 'Cancel');
    T.clear(dlg,
      el('h2', {id: 'confirm-title'}, 'Run a command on this computer?'),
      el('p', {}, 'The page asks tako to start this program, with your rights, as an MCP server:'),
      el('ol', {class: 'argv'}, c.argv.map((a) => el('li', {}, el('code', {}, a)))),
      c.env && c.env.length ? el('p', {}, 'With these environment variables set: ', el('code', {}, c.env.join(', '))) : null,
      el('p', {class: 'muted'}, 'Run it only if you typed it yourself.'),
      el('div', {class: 'buttons'}, cancel, run));
    dlg.setAttribute('aria-labelledby', 'confirm-title');
    const done = async (yes) => {
      dlg.close();
      try {
        if (yes) {
          const s = await T.post('/api/confirm', {id: c.id});
          T.say(`Starting ${s.name}…`);
        } else {
          await T.post('/api/confirm', {id: c.id, cancel: true});
          T.say('Nothing was run.');
        }
      } catch (err) {
        T.say('Confirm: ' + err.message, true);
      }
      resolve();
    };
    run.onclick = () => done(true);
    cancel.onclick = () => done(false);
    dlg.oncancel = (e) => { e.preventDefault(); done(false); };
    dlg.showModal();
    cancel.focus();
  });

  T.on('ready', () => {
    document.getElementById('empty').append(el('h2', {}, 'Connect to a server'), form(), T.importer());
    const dlg = document.getElementById('connect');
    dlg.append(el('h2', {}, 'Add a server'), form(), T.importer(),
      el('div', {class: 'buttons'}, el('button', {type: 'button', onclick: () => dlg.close()}, 'Close')));
    document.getElementById('add').addEventListener('click', () => dlg.showModal());
    document.getElementById('export').addEventListener('click', () => { location.href = T.withToken('/api/export'); });
  });
  T.on('login', (m) => {
    const s = T.srv(m.server);
    if (s) T.say(`${s.sum.name} wants a login: open the authorization page in its panel.`);
  });
  T.on('login-done', (m) => {
    const s = T.srv(m.server);
    if (s) T.say(m.error ? `The login to ${s.sum.name} failed: ${m.error}` : `Logged in to ${s.sum.name}.`, !!m.error);
  });
})();
