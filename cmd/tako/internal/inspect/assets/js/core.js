// tako inspect: the core of the page. Every other script adds to the one
// global, T: the API client (every request carries the session token),
// the event stream, the servers' client-side state, the panels and their
// tabs, and the small DOM helpers the pages are built with. Text from a
// server is only ever set as text (el(), textContent), never as HTML.
'use strict';

const T = (() => {
  const token = new URLSearchParams(location.search).get('token') || '';
  const T = {token, servers: new Map(), handlers: {}, tabs: [], shown: new Set(), lastEvent: 0};

  // el builds an element: el('div', {class: 'x', onclick: f}, 'text', child).
  T.el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k in e && typeof v !== 'string') e[k] = v;
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const k of kids.flat(Infinity)) {
      if (k === undefined || k === null || k === false) continue;
      e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    }
    return e;
  };
  T.clear = (e, ...kids) => { e.replaceChildren(...kids.flat(Infinity).filter((k) => k !== undefined && k !== null && k !== false)); return e; };
  let uid = 0;
  T.uid = (p) => `${p || 'id'}-${++uid}`;

  // api sends one request; a JSON body makes it a POST. It resolves with
  // the answer's JSON and rejects with an Error whose message is the
  // inspector's.
  T.api = async (method, path, body) => {
    const opts = {method, headers: {Authorization: 'Bearer ' + token}};
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    const r = await fetch(path, opts);
    let v = null;
    try { v = await r.json(); } catch (e) { v = null; }
    if (!r.ok) {
      const err = new Error((v && v.error) || `HTTP ${r.status}`);
      err.status = r.status;
      if (v && v.code !== undefined) err.code = v.code;
      throw err;
    }
    return v;
  };
  T.get = (path) => T.api('GET', path);
  T.post = (path, body) => T.api('POST', path, body === undefined ? {} : body);
  T.srvPath = (id, p) => `/api/servers/${encodeURIComponent(id)}${p || ''}`;
  // withToken is a URL the browser fetches itself (a download, a link).
  T.withToken = (path) => path + (path.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(token);

  // say puts a line in the live region (screen readers hear it) and the
  // status bar.
  T.say = (msg, bad) => {
    const s = document.getElementById('status');
    s.textContent = msg;
    s.className = bad ? 'bad' : '';
  };
  T.fail = (what) => (err) => T.say(`${what}: ${err.message}`, true);

  T.fmtMs = (ms) => (ms === undefined || ms === null) ? '' : ms < 1 ? `${ms.toFixed(2)} ms` : ms < 1000 ? `${ms.toFixed(ms < 10 ? 1 : 0)} ms` : `${(ms / 1000).toFixed(2)} s`;
  T.fmtBytes = (n) => n < 1024 ? `${n} B` : n < 1 << 20 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / (1 << 20)).toFixed(1)} MiB`;
  T.fmtTime = (t) => { const d = new Date(t); return isNaN(d) ? '' : d.toLocaleTimeString([], {hour12: false}) + '.' + String(d.getMilliseconds()).padStart(3, '0'); };
  T.debounce = (f, ms) => { let h; return (...a) => { clearTimeout(h); h = setTimeout(() => f(...a), ms); }; };

  // copy puts text on the clipboard, or shows it to be copied by hand.
  T.copy = async (text, what) => {
    try {
      await navigator.clipboard.writeText(text);
      T.say(`Copied ${what || 'to the clipboard'}.`);
    } catch (e) {
      const box = T.el('textarea', {class: 'copybox', readonly: true, 'aria-label': 'Copy this', rows: 3}, text);
      document.getElementById('status').replaceChildren(T.el('span', {}, 'Copy it by hand: '), box);
      box.select();
    }
  };

  // jsonView is a collapsible view of a JSON value: objects and arrays
  // open on demand, so a large value costs nothing until looked at.
  T.jsonView = (value, open) => {
    const node = (v, key, depth) => {
      const label = key === undefined ? [] : [T.el('span', {class: 'jk'}, JSON.stringify(key)), ': '];
      if (v !== null && typeof v === 'object') {
        const isArr = Array.isArray(v);
        const keys = isArr ? v.map((_, i) => i) : Object.keys(v);
        const d = T.el('details', {class: 'jn'});
        const sum = T.el('summary', {}, label, isArr ? `[${keys.length} items]` : `{${keys.length} keys}`);
        d.append(sum);
        let filled = false;
        const fill = () => {
          if (filled) return;
          filled = true;
          const box = T.el('div', {class: 'jc'});
          const max = 500;
          keys.slice(0, max).forEach((k) => box.append(node(v[k], isArr ? undefined : k, depth + 1)));
          if (keys.length > max) {
            let shown = max;
            const more = T.el('button', {type: 'button', class: 'link', onclick: () => {
              keys.slice(shown, shown + max).forEach((k) => box.insertBefore(node(v[k], isArr ? undefined : k, depth + 1), more));
              shown += max;
              if (shown >= keys.length) more.remove();
            }}, `show ${Math.min(max, keys.length - max)} more`);
            box.append(more);
          }
          d.append(box);
        };
        d.addEventListener('toggle', () => d.open && fill());
        if (open && depth < 2) { d.open = true; fill(); }
        return d;
      }
      let text = JSON.stringify(v);
      const cls = v === null ? 'jnull' : typeof v === 'string' ? 'js' : typeof v === 'number' ? 'jnum' : 'jb';
      const row = T.el('div', {class: 'jl'}, label);
      if (typeof v === 'string' && text.length > 2000) {
        const span = T.el('span', {class: cls}, text.slice(0, 2000) + '…');
        row.append(span, ' ', T.el('button', {type: 'button', class: 'link', onclick: (e) => { span.textContent = text; e.target.remove(); }}, `all ${text.length} characters`));
      } else {
        row.append(T.el('span', {class: cls}, text));
      }
      return row;
    };
    return T.el('div', {class: 'json'}, node(value, undefined, 0));
  };

  // on registers a handler for an event type of the stream.
  T.on = (type, f) => { (T.handlers[type] = T.handlers[type] || []).push(f); };
  // onServer registers a handler for events of one server: f(s, data).
  T.onServer = (type, f) => T.on(type, (d) => { const s = d && T.srv(d.server); if (s) f(s, d); });
  const dispatch = (type, data) => (T.handlers[type] || []).forEach((f) => { try { f(data); } catch (e) { console.error(type, e); } });

  // The event stream: EventSource reconnects by itself and sends
  // Last-Event-ID; a "reset" means the page missed too much and loads the
  // state again.
  let es = null;
  const types = ['server', 'removed', 'message', 'notification', 'progress', 'run', 'task', 'request', 'request-done',
    'updated', 'net', 'net-sse', 'auth', 'login', 'login-done', 'reset'];
  T.follow = () => {
    if (es) es.close();
    es = new EventSource(T.withToken(`/api/events?after=${T.lastEvent}`));
    const live = document.getElementById('live');
    es.onopen = () => { live.textContent = 'live'; live.className = 'ok'; };
    es.onerror = () => { live.textContent = 'reconnecting…'; live.className = 'bad'; };
    for (const t of types) {
      es.addEventListener(t, (ev) => {
        T.lastEvent = Math.max(T.lastEvent, Number(ev.lastEventId) || 0);
        let data = null;
        try { data = JSON.parse(ev.data); } catch (e) { return; }
        if (t === 'reset') { T.load(); return; }
        dispatch(t, data);
      });
    }
  };

  // srv is the page's state of one server.
  T.srv = (id) => T.servers.get(id);
  const newState = (sum) => ({sum, panel: null, tabs: {}, runs: new Map(), notes: [], net: new Map(), auth: [], tools: null});

  T.on('server', (sum) => {
    let s = T.srv(sum.id);
    if (!s) {
      s = newState(sum);
      T.servers.set(sum.id, s);
      T.shown.add(sum.id);
      T.layout();
    }
    const was = s.sum.state;
    s.sum = sum;
    T.renderServerList();
    if (s.panel) T.renderHeader(s);
    if (was !== sum.state && sum.state === 'connected') {
      s.tools = null;
      for (const tab of Object.values(s.tabs)) if (tab.reset) tab.reset();
      T.refreshTab(s);
    }
  });
  T.on('removed', (m) => {
    const s = T.srv(m.server);
    if (!s) return;
    if (s.panel) s.panel.remove();
    T.servers.delete(m.server);
    T.shown.delete(m.server);
    T.renderServerList();
    T.layout();
  });

  // load reads the whole state, then follows the stream from there.
  T.load = async () => {
    try {
      const st = await T.get('/api/state');
      document.getElementById('version').textContent = st.version;
      T.lastEvent = st.event;
      for (const sum of st.servers) {
        const s = T.srv(sum.id);
        if (s) s.sum = sum;
        else { T.servers.set(sum.id, newState(sum)); T.shown.add(sum.id); }
      }
      for (const id of [...T.servers.keys()]) {
        if (!st.servers.some((x) => x.id === id)) T.servers.delete(id);
      }
      dispatch('loaded', st);
      T.renderServerList();
      T.layout();
      T.follow();
    } catch (e) {
      T.say('Cannot load the inspector\'s state: ' + e.message, true);
    }
  };

  // Panels: one per shown server, side by side. Each has a header and
  // tabs, which other scripts register with T.tab(name, label, render).
  T.tab = (name, label, make, when) => T.tabs.push({name, label, make, when: when || (() => true)});

  T.layout = () => {
    const main = document.getElementById('panels');
    const ids = [...T.servers.keys()].filter((id) => T.shown.has(id));
    document.getElementById('empty').hidden = T.servers.size > 0;
    for (const id of ids) {
      const s = T.srv(id);
      if (!s.panel) T.makePanel(s);
    }
    const kids = ids.map((id) => T.srv(id).panel);
    for (const s of T.servers.values()) if (s.panel && !T.shown.has(s.sum.id)) s.panel.remove();
    kids.forEach((p) => main.append(p));
    main.dataset.count = String(kids.length);
  };

  T.makePanel = (s) => {
    const p = T.el('section', {class: 'panel', 'aria-label': s.sum.name});
    s.head = T.el('div', {class: 'phead'});
    s.tablist = T.el('div', {class: 'tabs', role: 'tablist', 'aria-label': `Pages of ${s.sum.name}`});
    s.body = T.el('div', {class: 'pbody'});
    p.append(s.head, s.tablist, s.body);
    s.panel = p;
    s.current = s.current || 'tools';
    T.renderHeader(s);
    T.renderTabs(s);
  };

  T.renderTabs = (s) => {
    const tabs = T.tabs.filter((t) => t.when(s));
    if (!tabs.some((t) => t.name === s.current)) s.current = tabs[0].name;
    T.clear(s.tablist);
    tabs.forEach((t, i) => {
      const b = T.el('button', {type: 'button', role: 'tab', id: `${s.sum.id}-tab-${t.name}`, 'aria-selected': String(t.name === s.current),
        tabindex: t.name === s.current ? '0' : '-1', 'data-tab': t.name, onclick: () => T.show(s, t.name),
        onkeydown: (e) => {
          const d = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
          if (!d) return;
          const n = tabs[(i + d + tabs.length) % tabs.length];
          T.show(s, n.name);
          s.tablist.querySelector(`[data-tab="${n.name}"]`).focus();
        }}, t.label);
      if (t.badge) { const c = t.badge(s); if (c) b.append(T.el('span', {class: 'badge'}, String(c))); }
      s.tablist.append(b);
    });
    T.show(s, s.current);
  };

  // show makes tab name the one shown in s's panel, building it the
  // first time.
  T.show = (s, name) => {
    s.current = name;
    for (const b of s.tablist.children) {
      const on = b.dataset.tab === name;
      b.setAttribute('aria-selected', String(on));
      b.tabIndex = on ? 0 : -1;
    }
    let tab = s.tabs[name];
    if (!tab) {
      const def = T.tabs.find((t) => t.name === name);
      const box = T.el('div', {role: 'tabpanel', class: 'tabpanel', 'aria-labelledby': `${s.sum.id}-tab-${name}`, 'data-page': name});
      tab = s.tabs[name] = Object.assign({box}, def.make(s, box) || {});
    }
    T.clear(s.body, tab.box);
    if (tab.shown) tab.shown();
  };
  T.refreshTab = (s) => { const t = s.tabs[s.current]; if (t && t.shown) t.shown(); };
  T.badges = (s) => {
    if (!s.panel) return;
    for (const b of s.tablist.children) {
      const def = T.tabs.find((t) => t.name === b.dataset.tab);
      const old = b.querySelector('.badge');
      if (old) old.remove();
      const c = def && def.badge ? def.badge(s) : 0;
      if (c) b.append(T.el('span', {class: 'badge'}, String(c)));
    }
  };

  T.connected = (s) => s.sum.state === 'connected';
  // notConnected is the line a page shows while its server is not.
  T.notConnected = (s) => T.el('p', {class: 'muted'}, `${s.sum.name} is ${s.sum.state}.`);

  document.addEventListener('DOMContentLoaded', () => {
    if (!token) { T.say('This page needs the URL tako inspect printed (with its token).', true); return; }
    dispatch('ready');
    T.load();
  });
  return T;
})();
