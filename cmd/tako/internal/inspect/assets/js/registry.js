// Import of an MCP registry server.json. tako reads the file (in Go, so
// that what is confirmed is what runs) and lists its packages and
// remotes; the person picks one, fills in what it asks for (secrets in
// password fields), sees the exact command or URL, and connects. A
// package's command then waits for the same confirmation as a typed one.
'use strict';

(() => {
  const {el} = T;

  T.importer = () => {
    const id = T.uid('sj');
    const text = el('textarea', {id: id + '-text', class: 'wide', rows: 4, placeholder: '{"name": "io.github.you/server", "packages": [...], "remotes": [...]}'});
    const file = el('input', {type: 'file', id: id + '-file', accept: '.json,application/json'});
    const out = el('div', {class: 'sjout'});
    const read = async () => {
      let r;
      try {
        r = await T.post('/api/registry', {text: text.value});
      } catch (err) {
        T.clear(out, el('p', {class: 'error', role: 'alert'}, err.message));
        return;
      }
      show(r);
    };
    file.addEventListener('change', async () => {
      if (!file.files.length) return;
      text.value = await file.files[0].text();
      read();
    });

    // show lists the choices; picking one draws its inputs.
    const show = (r) => {
      const inputs = el('div', {class: 'sjinputs'});
      const choices = el('fieldset', {class: 'sjchoices'}, el('legend', {}, 'Run a package or reach a remote'),
        r.choices.map((c) => {
          const cid = `${id}-${c.id.replace(':', '-')}`;
          return el('div', {class: 'row'},
            el('input', {type: 'radio', name: id + '-pick', id: cid, value: c.id, disabled: !!c.error, onchange: () => pick(c, inputs, r)}),
            el('label', {for: cid}, c.label, c.error ? el('span', {class: 'muted'}, ` — ${c.error}`) : null));
        }));
      T.clear(out,
        el('p', {}, el('strong', {}, r.title || r.name), r.version ? ` ${r.version}` : '', r.description ? ` — ${r.description}` : ''),
        choices, inputs);
    };

    const pick = (c, box, r) => {
      const fields = c.fields.map((f) => {
        const fid = `${id}-f-${f.key.replace(/[^A-Za-z0-9_-]/g, '_')}`;
        let input;
        if (f.choices && f.choices.length) {
          input = el('select', {id: fid}, f.required ? null : el('option', {value: ''}, '(none)'),
            f.choices.map((v) => el('option', {value: v, selected: v === f.default}, v)));
        } else if (f.repeated) {
          input = el('textarea', {id: fid, rows: 2, placeholder: f.placeholder || 'one a line'});
        } else {
          input = el('input', {id: fid, type: f.secret ? 'password' : 'text', autocomplete: 'off',
            placeholder: f.placeholder || (f.default ? `default: ${f.default}` : '')});
        }
        input.required = !!f.required && !f.default;
        input.dataset.key = f.key;
        input.addEventListener('input', () => update());
        input.addEventListener('change', () => update());
        return {f, input, row: el('div', {class: 'row'},
          el('label', {for: fid}, f.label, f.required ? el('span', {class: 'req', title: 'required'}, ' *') : null),
          input, f.description ? el('span', {class: 'muted small'}, f.description) : null)};
      });
      const answers = () => Object.fromEntries(fields.filter((x) => x.input.value !== '').map((x) => [x.f.key, x.input.value]));
      const shown = el('div', {class: 'sjpreview', 'aria-live': 'polite'});
      let n = 0;
      const update = async () => {
        const mine = ++n;
        try {
          const p = await T.post('/api/registry', {text: text.value, choice: c.id, answers: answers(), preview: true});
          if (mine !== n) return;
          T.clear(shown, p.argv
            ? [el('p', {}, 'This command will run, once you confirm it:'), el('pre', {class: 'sjcmd'}, p.argv.map(shellWord).join(' ')),
              p.env.length ? el('p', {}, 'With these environment variables set: ', el('code', {}, p.env.join(', '))) : null]
            : [el('p', {}, 'tako will connect to:'), el('pre', {class: 'sjcmd'}, p.url),
              p.headers.length ? el('p', {}, 'With these headers: ', el('code', {}, p.headers.join(', '))) : null]);
        } catch (err) {
          if (mine === n) T.clear(shown, el('p', {class: 'muted'}, err.message));
        }
      };
      const go = el('button', {type: 'submit', class: 'primary'}, c.kind === 'stdio' ? 'Run it…' : 'Connect');
      const f = el('form', {class: 'sjform', onsubmit: async (e) => {
        e.preventDefault();
        go.disabled = true;
        try {
          const s = await T.post('/api/registry', {text: text.value, choice: c.id, answers: answers()});
          if (s.confirm) await T.confirmCommand(s.confirm);
          else T.say(`Connecting to ${s.name}…`);
          const dlg = document.getElementById('connect');
          if (dlg.open) dlg.close();
        } catch (err) {
          T.say('Import: ' + err.message, true);
        } finally {
          go.disabled = false;
        }
      }}, fields.map((x) => x.row), shown, el('div', {class: 'buttons'}, go));
      T.clear(box, f);
      update();
    };

    return el('details', {class: 'import'},
      el('summary', {}, 'Import a registry server.json'),
      el('div', {class: 'row'}, el('label', {for: text.id}, 'server.json'), text),
      el('div', {class: 'row'}, el('label', {for: file.id}, 'Or load a file'), file),
      el('div', {class: 'buttons'}, el('button', {type: 'button', onclick: read}, 'Read it')),
      out);
  };

  // shellWord quotes an argument the way a POSIX shell reads it back.
  const shellWord = (a) => a === '' ? "''" : /^[A-Za-z0-9_\-./:=@%+,]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
})();
