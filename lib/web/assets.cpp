#include "lib/web/assets.hpp"

namespace kai::web {

std::string_view stylesheet() {
  return R"CSS(:root { color-scheme: light dark; --fg: #1b1b1b; --bg: #ffffff; --muted: #4a4a4a; --line: #c8c8c8;
  --add-bg: #e3f6e3; --add-fg: #0b4d0b; --del-bg: #fbe4e4; --del-fg: #7a0c0c; --hunk: #0a4f7a; --warn-bg: #fff4d6;
  --warn-fg: #5c3d00; --link: #0645ad; --focus: #1a5fb4; }
@media (prefers-color-scheme: dark) { :root { --fg: #ececec; --bg: #151515; --muted: #bdbdbd; --line: #444;
  --add-bg: #12341a; --add-fg: #b9f3c2; --del-bg: #3d1515; --del-fg: #ffc4c4; --hunk: #8fd0ff; --warn-bg: #3a2e0a;
  --warn-fg: #ffe29a; --link: #9ecbff; --focus: #9ecbff; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--link); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 8px; top: 8px; background: var(--bg); padding: 4px 8px; }
header { border-bottom: 1px solid var(--line); padding: 8px 16px; }
header nav a { margin-right: 16px; font-weight: 600; }
main { max-width: 1100px; margin: 0 auto; padding: 16px; }
h1 { font-size: 1.5rem; margin: 0 0 12px; overflow-wrap: anywhere; }
h2 { font-size: 1.15rem; margin: 24px 0 8px; }
table.list { border-collapse: collapse; width: 100%; }
table.list th, table.list td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
table.list td.what { overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
dl.facts dt { font-weight: 600; color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
pre, code { font: 14px/1.4 ui-monospace, monospace; }
.quoted { white-space: pre-wrap; overflow-wrap: anywhere; border-left: 3px solid var(--line); padding: 4px 8px; margin: 4px 0; }
.diff { overflow-x: auto; border: 1px solid var(--line); }
.diff pre { margin: 0; padding: 8px 0; }
.diff .l { display: block; padding: 0 8px; white-space: pre; }
.diff .add { background: var(--add-bg); color: var(--add-fg); }
.diff .del { background: var(--del-bg); color: var(--del-fg); }
.diff mark { background: transparent; color: inherit; font-weight: 700; text-decoration: underline; }
.diff .hunk { color: var(--hunk); font-weight: 600; }
.diff .meta { font-weight: 600; }
.notice, .warn { background: var(--warn-bg); color: var(--warn-fg); padding: 8px 12px; border-radius: 4px; margin: 12px 0; }
.error { font-weight: 600; }
.badge { display: inline-block; padding: 0 6px; border: 1px solid var(--line); border-radius: 4px; }
.badge.high, .badge.confirm, .badge.blocked { border-color: currentColor; font-weight: 700; }
table.diffstat caption { text-align: left; color: var(--muted); padding: 4px 0; }
details.file { border: 1px solid var(--line); border-radius: 4px; margin: 8px 0; }
details.file summary { padding: 6px 8px; cursor: pointer; overflow-wrap: anywhere; }
details.file[open] summary { border-bottom: 1px solid var(--line); }
details.file .diff { border: 0; }
details.file p { margin: 8px; }
form.decide { border: 1px solid var(--line); border-radius: 6px; padding: 12px; margin: 16px 0; }
form.decide label { display: block; font-weight: 600; margin-bottom: 4px; }
form.decide input[type=text] { font: inherit; width: 100%; max-width: 28rem; padding: 6px; margin-bottom: 8px; }
button { font: inherit; padding: 8px 16px; border-radius: 4px; border: 1px solid var(--fg); cursor: pointer; }
button.approve { background: #0b5d1e; color: #fff; border-color: #0b5d1e; }
button.later { background: var(--bg); color: var(--fg); }
form.decide button + button { margin-left: 8px; }
button.reject, button.rollback { background: #8a1111; color: #fff; border-color: #8a1111; }
button:disabled { opacity: .5; cursor: not-allowed; }
table.list small { color: var(--muted); }
ul.per-file { margin: 0; padding-left: 1.2em; }
button.always { background: var(--bg); color: var(--fg); }
pre.rule { white-space: pre-wrap; }
/* Narrow screens: each row a stack of cells, each cell with its column's name. */
@media (max-width: 640px) { table.list thead { display: none; } table.list td { display: block; border: 0; padding: 2px 0; }
  table.list td[data-label]::before { content: attr(data-label); display: inline-block; min-width: 7.5rem;
    padding-right: .75rem; font-weight: 600; color: var(--muted); }
  table.list tr { display: block; border-bottom: 1px solid var(--line); padding: 8px 0; } main { padding: 8px; }
  form.decide button { display: block; margin: 8px 0 0; } form.decide button + button { margin-left: 0; } }
)CSS";
}

std::string_view script() {
  return R"JS('use strict';
// Never approve unseen: a long changeset's approve buttons stay disabled
// until every file's diff has been opened (the form's "opened" field lists
// them, and the server checks it) or CONFIRM is typed.
(function () {
  var forms = document.querySelectorAll('form[data-gate="open-all"]');
  if (!forms.length) return;
  var files = document.querySelectorAll('details.file[data-part]');
  var count = document.getElementById('opened-count');
  var opened = {};
  function update() {
    var list = Object.keys(opened);
    var all = list.length === files.length;
    if (count) count.textContent = list.length + ' of ' + files.length + ' opened';
    for (var i = 0; i < forms.length; i++) {
      var f = forms[i];
      var field = f.querySelector('input[name=opened]');
      if (field) field.value = list.join(',');
      var confirm = f.querySelector('input[name=confirm]');
      var ok = all || (confirm !== null && confirm.value.trim() === 'CONFIRM');
      var buttons = f.querySelectorAll('button');
      for (var j = 0; j < buttons.length; j++)
        buttons[j].disabled = !ok || document.body.hasAttribute('data-stale');
    }
  }
  for (var i = 0; i < files.length; i++)
    files[i].addEventListener('toggle', function (e) {
      if (e.target.open) { opened[e.target.getAttribute('data-part')] = true; update(); }
    });
  for (var k = 0; k < forms.length; k++) forms[k].addEventListener('input', update);
  update();
})();
(function () {
  var body = document.body;
  var mode = body.getAttribute('data-live');
  if (!mode) return;
  var stale = document.getElementById('stale');
  var version = null;
  function busy() {
    var a = document.activeElement;
    if (a && (a.tagName === 'INPUT' || a.tagName === 'TEXTAREA')) return true;
    var inputs = document.querySelectorAll('input[type=text]');
    for (var i = 0; i < inputs.length; i++) if (inputs[i].value !== '') return true;
    return false;
  }
  function swap() {
    fetch(location.pathname, { credentials: 'same-origin' }).then(function (r) { return r.text(); }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, 'text/html');
      var fresh = doc.getElementById('main');
      if (fresh) document.getElementById('main').replaceChildren.apply(document.getElementById('main'),
        Array.prototype.slice.call(fresh.childNodes));
    });
  }
  function watch(state) {
    var p = state.proposals && state.proposals[body.getAttribute('data-id')];
    var digest = body.getAttribute('data-digest'), was = body.getAttribute('data-state');
    if (p && p.digest === digest && p.status === was) return;
    stale.textContent = 'This proposal changed or was decided elsewhere since this page was loaded. ' +
      'Reload the page to see it as it is now.';
    stale.hidden = false;
    body.setAttribute('data-stale', '');
    var buttons = document.querySelectorAll('form.decide button');
    for (var i = 0; i < buttons.length; i++) buttons[i].disabled = true;
  }
  function poll() {
    fetch('/state.json', { credentials: 'same-origin' }).then(function (r) { return r.json(); }).then(function (state) {
      if (mode === 'watch') return watch(state);
      // A person typing keeps the page as it is; it catches up afterwards.
      if (version !== null && state.version !== version) {
        if (busy()) return;
        swap();
      }
      version = state.version;
    }).catch(function () {
      stale.textContent = 'kaicoder serve is not answering; this page may be out of date.';
      stale.hidden = false;
    });
  }
  poll();
  setInterval(poll, 2000);
})();
)JS";
}

}  // namespace kai::web
