// The users API explorer: plain JavaScript, no framework, no build step. Read it top to bottom.
//
// Every request goes through send(), which shows it in the log as the raw HTTP exchange: the
// request line, the headers and the body, then the status line, the headers and the body. The
// page judges nothing itself: the server's answers, 4xx included, are the lesson.

const $ = (id) => document.getElementById(id);

const TOKEN_KEY = 'users-explorer-token'; // sessionStorage: this tab only, gone when it closes
const MAX_EXCHANGES = 60;

const state = {
  token: sessionStorage.getItem(TOKEN_KEY) || '',
  list: { page: 1, perPage: 10, q: '', sort: 'id', total: 0, totalPages: 0, links: {}, users: [] },
  listTicket: 0, // counts list requests: only the answer to the latest one is shown
  editing: null, // the user in the form as last read: { id, name, email, etag }
  freshId: 0, // a user just created, to highlight in the list
};

// Reason phrases as Go's net/http writes them, for when fetch does not give the status text.
const REASONS = {
  200: 'OK', 201: 'Created', 204: 'No Content', 301: 'Moved Permanently', 304: 'Not Modified',
  307: 'Temporary Redirect', 308: 'Permanent Redirect', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden',
  404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict', 412: 'Precondition Failed',
  413: 'Request Entity Too Large', 415: 'Unsupported Media Type', 500: 'Internal Server Error',
  503: 'Service Unavailable',
};
const reason = (status, text) => text || REASONS[status] || '';

// ---------------------------------------------------------------------------------------------
// Sending requests, and showing each one as it crossed the wire

// send makes one request and logs the exchange. body is an object to send as JSON. A quiet
// exchange (the list read again after a change) is logged closed, so the change stays in view;
// why, when given, says in the log why the page sent a request that no button names.
async function send(method, path, { body, contentType = 'application/json', headers = [], quiet = false, why = '' } = {}) {
  const requestHeaders = [];
  if (state.token) requestHeaders.push(['Authorization', 'Bearer ' + state.token]);
  requestHeaders.push(['Accept', 'application/json']);
  let payload;
  if (body !== undefined) {
    payload = JSON.stringify(body);
    requestHeaders.push(['Content-Type', contentType]);
    requestHeaders.push(['Content-Length', String(new TextEncoder().encode(payload).length)]);
  }
  requestHeaders.push(...headers);

  const entry = logRequest(method, path, requestHeaders, payload, quiet, why);
  const started = performance.now();
  try {
    // no-store: the browser's cache must not answer for the server, nor add its own
    // If-None-Match, or the exchange shown would not be the one on the wire. (The browser sends
    // Cache-Control: no-cache and Pragma: no-cache for it, which the help text names.)
    const response = await fetch(path, {
      method,
      headers: requestHeaders.filter(([name]) => name !== 'Content-Length'), // the browser sets it
      body: payload,
      cache: 'no-store',
    });
    const text = await response.text();
    const result = {
      status: response.status,
      statusText: reason(response.status, response.statusText),
      headers: response.headers,
      text,
      json: parseJSON(text, response.headers.get('Content-Type')),
    };
    logResponse(entry, result, performance.now() - started);
    return result;
  } catch (error) {
    logFailure(entry, error);
    return { status: 0, statusText: 'no answer', headers: new Headers(), text: '', json: null, error };
  }
}

function parseJSON(text, contentType) {
  if (!text || !(contentType || '').includes('json')) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const maskToken = (token) => '••••' + (token.length > 8 ? token.slice(-4) : '');

// canonicalName writes a header name as Go's net/http puts it on the wire (fetch lower-cases them).
const canonicalName = (name) => name.split('-').map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('-');

const log = $('exchange-log');
const bodies = new WeakMap(); // each body element: its raw text, to re-render when "Indent JSON" changes
let exchangeCount = 0; // numbers the exchanges: #1 is the first this page sent

// el builds an element from a tag, attributes and children (strings become text, never markup).
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value == null) continue;
    if (name === 'class') node.className = value;
    else if (name === 'text') node.textContent = value;
    else node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child != null && child !== false) node.append(child);
  }
  return node;
}

function headerLines(headers) {
  return headers.map(([name, value]) => {
    if (name === 'Authorization' && value.startsWith('Bearer ')) {
      return [el('span', { class: 'hname', text: name }), ': Bearer ', el('span', { class: 'masked', text: maskToken(value.slice(7)) }), '\n'];
    }
    return [el('span', { class: 'hname', text: canonicalName(name) }), ': ' + value + '\n'];
  });
}

function bodyNode(text, contentType) {
  const node = el('span', { class: 'body' });
  bodies.set(node, { text, contentType });
  renderBody(node);
  return node;
}

function renderBody(node) {
  const { text, contentType } = bodies.get(node);
  let shown = text;
  if ($('pretty').checked && (contentType || '').includes('json')) {
    try {
      shown = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // not JSON after all: show it as it came
    }
  }
  node.textContent = shown;
}

// beginAction closes the exchanges of earlier actions, so the open ones are those of the latest.
function beginAction() {
  for (const details of log.querySelectorAll('details[open]')) details.open = false;
}

// wirePre is the <pre> of a request or a response. A long one scrolls inside its max-height, and
// a keyboard can scroll only what it can focus: hence a region with tabindex="0", named by its
// heading and the exchange's number ("Response #7"), so that no two regions share a name.
function wirePre(id, kind, ...content) {
  return el('div', {},
    el('h3', { id: `${id}-${kind}`, text: kind === 'request' ? 'Request' : 'Response' }),
    el('pre', { role: 'region', tabindex: '0', 'aria-labelledby': `${id}-${kind} ${id}-number` }, ...content));
}

function logRequest(method, path, headers, payload, quiet, why) {
  $('log-empty').hidden = true;
  const id = `exchange-${++exchangeCount}`;
  const request = wirePre(id, 'request',
    el('span', { class: 'start', text: `${method} ${path} HTTP/1.1` }), '\n',
    headerLines([['Host', location.host], ...headers]),
    payload !== undefined ? ['\n', bodyNode(payload, 'application/json')] : []);
  const response = wirePre(id, 'response', el('span', { class: 'dim', text: 'waiting for the answer…' }));
  const status = el('span', { class: 'status-badge', text: 'waiting…' });
  const timing = el('span');
  const item = el('li', { class: 'exchange pending', 'data-method': method, 'data-path': path },
    el('details', { open: !quiet },
      el('summary', {},
        el('span', { class: `method ${method}`, text: method }),
        el('span', { class: 'target', text: path }),
        status,
        el('span', { class: 'meta' }, el('span', { id: `${id}-number`, text: `#${exchangeCount}` }), timing)),
      el('div', { class: 'wire' }, why ? el('p', { class: 'why help', text: why }) : null, request, response)));
  log.prepend(item);
  while (log.children.length > MAX_EXCHANGES) log.lastElementChild.remove();
  return { item, status, timing, responsePre: response.querySelector('pre') };
}

function logResponse(entry, result, elapsed) {
  const headers = [...result.headers.entries()];
  const contentType = result.headers.get('Content-Type');
  entry.item.className = `exchange s${String(result.status).charAt(0)}`;
  entry.item.dataset.status = result.status;
  entry.status.textContent = `${result.status} ${result.statusText}`;
  const requestID = result.headers.get('X-Request-Id');
  entry.timing.textContent = ` · ${Math.round(elapsed)} ms` + (requestID ? ` · ${requestID}` : '');
  entry.responsePre.replaceChildren(...[
    el('span', { class: 'start', text: `HTTP/1.1 ${result.status} ${result.statusText}` }), '\n',
    headerLines(headers),
    result.text ? ['\n', bodyNode(result.text, contentType)] : [],
  ].flat(Infinity));
}

function logFailure(entry, error) {
  entry.item.className = 'exchange failed';
  entry.status.textContent = 'no answer';
  entry.responsePre.replaceChildren(el('span', { class: 'dim', text: `The server could not be reached (${error.message}).` }));
}

$('pretty').addEventListener('change', () => {
  for (const node of log.querySelectorAll('.body')) renderBody(node);
});

$('clear-log').addEventListener('click', () => {
  log.replaceChildren();
  $('log-empty').hidden = false;
  $('log-empty').textContent = 'The log is empty. The next request will appear here.';
});

// ---------------------------------------------------------------------------------------------
// Alerts: an answer that is not a success, told in words next to where it matters

function showAlert(box, result, { title, hint, actions = [], warn = false } = {}) {
  const message = result.json && typeof result.json.error === 'string' ? result.json.error : '';
  const heading = title || (result.status ? `${result.status} ${result.statusText}` : 'No answer');
  box.className = warn ? 'alert warn' : 'alert';
  box.replaceChildren(...[
    el('strong', { text: heading }),
    message ? el('p', { text: `The server says: ${message}.` }) : null,
    result.status === 0 ? el('p', { text: 'The server could not be reached. Is it still running?' }) : null,
    hint ? el('p', { text: hint }) : null,
    actions.length ? el('div', { class: 'actions' }, actions) : null,
  ].filter(Boolean));
  box.hidden = false;
}

const hideAlert = (box) => {
  box.hidden = true;
  box.replaceChildren();
};

// ---------------------------------------------------------------------------------------------
// The token

const tokenInput = $('token');

function showTokenState() {
  const tokenState = $('token-state');
  tokenState.classList.remove('missing');
  tokenState.textContent = state.token ? `Using the token ${maskToken(state.token)} for this tab.` : '';
  $('forget-token').hidden = !state.token;
}

$('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const value = tokenInput.value.trim();
  if (!value) {
    $('token-state').textContent = 'Enter a token first: the server prints two at start when USERS_TOKENS is unset.';
    $('token-state').classList.add('missing');
    tokenInput.focus();
    return;
  }
  if (/[^\x21-\x7e]/.test(value)) { // a header cannot carry it: fetch would refuse to send it
    $('token-state').textContent = 'A bearer token has only letters, digits and - . _ ~ + / = (RFC 6750): check what was pasted.';
    $('token-state').classList.add('missing');
    tokenInput.focus();
    return;
  }
  state.token = value;
  sessionStorage.setItem(TOKEN_KEY, value);
  showTokenState();
  clearFieldErrors(); // an answer to the last token says nothing about this one
  notice('');
  beginAction();
  loadList(listPath(1));
});

$('forget-token').addEventListener('click', () => {
  state.token = '';
  sessionStorage.removeItem(TOKEN_KEY);
  tokenInput.value = '';
  showTokenState();
  startCreate();
  showNoToken();
  tokenInput.focus();
});

// ---------------------------------------------------------------------------------------------
// The list: paging, search and sort are the API's own query parameters

const listRegion = $('list-region');
const tbody = $('users-body');

function listPath(page) {
  const { perPage, q, sort } = state.list;
  let path = `/api/users?page=${page}&per_page=${perPage}`;
  if (q) path += `&q=${encodeURIComponent(q)}`;
  if (sort !== 'id') path += `&sort=${encodeURIComponent(sort)}`;
  return path;
}

// parseLinks reads a Link header (RFC 8288) into { first, prev, next, last }.
function parseLinks(header) {
  const links = {};
  for (const match of (header || '').matchAll(/<([^>]*)>\s*;\s*rel="([^"]+)"/g)) links[match[2]] = match[1];
  return links;
}

async function loadList(path, { quiet = false } = {}) {
  if (!state.token) {
    showNoToken();
    return;
  }
  const ticket = ++state.listTicket;
  listRegion.setAttribute('aria-busy', 'true');
  if (!tbody.children.length) renderSkeleton();
  $('users-table').hidden = false;
  $('list-empty').hidden = true;
  const result = await send('GET', path, { quiet });
  if (ticket !== state.listTicket) return; // a newer request is on its way: its answer will show
  listRegion.removeAttribute('aria-busy');
  if (result.status === 200 && result.json && Array.isArray(result.json.data)) {
    hideAlert($('list-alert'));
    const envelope = result.json;
    Object.assign(state.list, {
      page: envelope.page || 1,
      total: envelope.total,
      totalPages: envelope.total_pages ?? 1,
      links: parseLinks(result.headers.get('Link')),
      users: envelope.data,
    });
    renderList();
    return;
  }
  if (result.status === 401 || !state.list.links.first) {
    // The token was refused, or no list was shown yet: there are no rows to keep.
    state.list.users = [];
    state.list.links = {};
    tbody.replaceChildren();
    renderPager();
    $('users-table').hidden = true;
  } else {
    renderList(); // the rows of the last answer stay in view, with their pager: nothing changed
  }
  let hint = '';
  const actions = [];
  if (result.status === 401) {
    hint = 'Check the token above: the server does not know it, so it lists nothing.';
    $('token-state').textContent = `The server refused the token ${maskToken(state.token)}.`;
    $('token-state').classList.add('missing');
  }
  if (result.status === 400) hint = 'The query was refused; the exchange on the right shows the one sent.';
  if (result.status === 0 || result.status >= 500) { // the same request may well work a moment later
    if (state.list.links.first) hint = 'The list below is the last one the server sent.';
    actions.push(linkButton('Retry', () => retryList(path)));
  }
  showAlert($('list-alert'), result, { hint, actions });
}

// retryList sends the failed request again. Its answer hides the alert, or shows a new one: either
// way the Retry button is gone, so the focus goes on to the new one, or to the users.
async function retryList(path) {
  await loadList(path);
  ($('list-alert').querySelector('button') || $('users-heading')).focus();
}

function renderSkeleton() {
  tbody.replaceChildren(...[1, 2, 3].map(() =>
    el('tr', { class: 'skeleton', 'aria-hidden': 'true' },
      el('td', { class: 'col-id' }, el('span')), el('td', {}, el('span')), el('td', {}, el('span')), el('td', {}))));
}

// rowButton finds the Edit or Delete button in the row of a user, if that row is on this page.
const rowButton = (id, action) => tbody.querySelector(`tr[data-id="${CSS.escape(String(id))}"] [data-action="${action}"]`);

function renderList() {
  const { users, total, q } = state.list;
  // New rows replace the old ones, and a button that had the focus would take it along to
  // <body>: the same button in the new row gets it back, or the heading when the row is gone.
  const focused = tbody.contains(document.activeElement) ? document.activeElement : null;
  const hadFocus = focused && { id: focused.closest('tr').dataset.id, action: focused.dataset.action };
  tbody.replaceChildren(...users.map(userRow));
  if (hadFocus) (rowButton(hadFocus.id, hadFocus.action) || $('users-heading')).focus();
  $('users-table').hidden = users.length === 0;
  const empty = $('list-empty');
  empty.hidden = users.length > 0;
  if (!users.length) {
    if (total > 0) {
      empty.replaceChildren(el('strong', { text: 'This page is empty.' }),
        el('span', { text: `There are ${total} ${total === 1 ? 'user' : 'users'} on earlier pages.` }),
        el('br'), linkButton('Go to the last page', () => {
          $('users-heading').focus(); // this message, and its button, go when the list loads
          loadList(state.list.links.last || listPath(1));
        }));
    } else if (q) {
      empty.replaceChildren(el('strong', { text: `No user matches “${q}”.` }),
        el('span', { text: 'The search looks in names and e-mails, ignoring case.' }),
        el('br'), linkButton('Clear the search', () => {
          $('q').value = '';
          state.list.q = '';
          $('q').focus(); // this message, and its button, go when the list loads
          loadList(listPath(1));
        }));
    } else {
      empty.replaceChildren(el('strong', { text: 'No users yet.' }),
        el('span', { text: 'Create the first one with the form below.' }),
        el('br'), linkButton('New user', () => startCreate(true)));
    }
  }
  renderPager();
  if (state.freshId) {
    const row = tbody.querySelector(`tr[data-id="${CSS.escape(String(state.freshId))}"]`);
    if (row) row.classList.add('fresh');
    state.freshId = 0;
  }
}

function linkButton(label, onClick) {
  const button = el('button', { type: 'button', class: 'small', text: label });
  button.addEventListener('click', () => {
    beginAction();
    onClick();
  });
  return button;
}

function userRow(user) {
  const selected = state.editing && state.editing.id === user.id;
  const edit = el('button', { type: 'button', class: 'ghost', 'data-action': 'edit', 'aria-label': `Edit ${user.name}`, text: 'Edit' });
  const remove = el('button', { type: 'button', class: 'danger-ghost', 'data-action': 'delete', 'aria-label': `Delete ${user.name}`, text: 'Delete' });
  edit.addEventListener('click', () => startEdit(user.id));
  remove.addEventListener('click', () => startEdit(user.id, { thenDelete: true }));
  return el('tr', { role: 'row', 'data-id': user.id, class: selected ? 'selected' : false },
    el('td', { role: 'cell', class: 'col-id', text: String(user.id) }),
    el('td', { role: 'cell', class: 'name', text: user.name }),
    el('td', { role: 'cell', class: 'email', text: user.email }),
    el('td', { role: 'cell', class: 'col-actions' }, edit, remove));
}

// The pager's buttons are dimmed with aria-disabled rather than disabled: a disabled button
// loses the focus, so Next pressed on the way to the last page would drop it on <body>.
const isOff = (button) => button.getAttribute('aria-disabled') === 'true';

function renderPager() {
  const { page, total, totalPages, links, q } = state.list;
  $('prev-page').setAttribute('aria-disabled', String(!links.prev));
  $('next-page').setAttribute('aria-disabled', String(!links.next));
  $('pager').hidden = !state.token || !links.first; // no list, no pages
  if ($('pager').hidden) {
    $('page-info').textContent = '';
    return;
  }
  const noun = q ? (total === 1 ? 'match' : 'matches') : (total === 1 ? 'user' : 'users');
  $('page-info').textContent = `Page ${page} of ${Math.max(totalPages, 1)} · ${total} ${noun}`;
}

function showNoToken() {
  state.listTicket++;
  listRegion.removeAttribute('aria-busy');
  tbody.replaceChildren();
  $('users-table').hidden = true;
  hideAlert($('list-alert'));
  state.list.links = {};
  renderPager();
  const empty = $('list-empty');
  empty.hidden = false;
  empty.replaceChildren(el('strong', { text: 'Enter a token to see the users.' }),
    el('span', { text: 'Every path under /api/ needs one. A read token lists; a write token also creates, edits and deletes.' }));
}

// Paging follows the Link header: the server says where the next and previous pages are.
$('prev-page').addEventListener('click', () => {
  if (isOff($('prev-page'))) return;
  beginAction();
  loadList(state.list.links.prev);
});
$('next-page').addEventListener('click', () => {
  if (isOff($('next-page'))) return;
  beginAction();
  loadList(state.list.links.next);
});

let searchTimer = 0;
$('q').addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    if ($('q').value === state.list.q) return;
    state.list.q = $('q').value;
    beginAction();
    loadList(listPath(1));
  }, 350);
});
$('list-form').addEventListener('submit', (event) => {
  event.preventDefault();
  clearTimeout(searchTimer);
  state.list.q = $('q').value;
  beginAction();
  loadList(listPath(1));
});
$('sort').addEventListener('change', () => {
  state.list.sort = $('sort').value;
  beginAction();
  loadList(listPath(1));
});
$('per-page').addEventListener('change', () => {
  state.list.perPage = Number($('per-page').value);
  beginAction();
  loadList(listPath(1));
});

// reloadList shows the current page again after a change.
const reloadList = () => loadList(listPath(state.list.page), { quiet: true });

// ---------------------------------------------------------------------------------------------
// The form: create, edit (PATCH or PUT) and delete

const form = $('user-form');
const nameInput = $('name');
const emailInput = $('email');
const saveButton = $('save-button');
const putButton = $('put-button');

function clearFieldErrors() {
  for (const field of ['name', 'email']) {
    $(field).removeAttribute('aria-invalid');
    $(`${field}-error`).hidden = true;
    $(`${field}-error`).textContent = '';
  }
  hideAlert($('form-alert'));
}

function showFieldError(field, message) {
  $(field).setAttribute('aria-invalid', 'true');
  $(`${field}-error`).textContent = message;
  $(`${field}-error`).hidden = false;
}

function notice(text, kind = '') {
  $('form-notice').className = `notice ${kind}`;
  $('form-notice').textContent = text;
}

const SENDING = 'Sending… the answer will show here and in the log.';

// setBusy shows that a change is on its way, and keeps it from being sent twice. The buttons are
// dimmed with aria-disabled, not disabled: a disabled button loses the focus, and a screen reader
// its place. So the form itself refuses what they would do meanwhile (below).
let busy = false;
function setBusy(on) {
  busy = on;
  for (const button of form.querySelectorAll('button')) button.setAttribute('aria-disabled', String(on));
  form.setAttribute('aria-busy', String(on));
  if (on) notice(SENDING, 'info');
  else if ($('form-notice').textContent === SENDING) notice('');
}
form.addEventListener('click', (event) => {
  if (busy && event.target.closest('button')) {
    event.preventDefault(); // no submit
    event.stopPropagation(); // and no click handler of the button: this listener runs first
  }
}, { capture: true });

function markSelectedRow() {
  for (const row of tbody.querySelectorAll('tr')) {
    row.classList.toggle('selected', !!state.editing && row.dataset.id === String(state.editing.id));
  }
}

function startCreate(focus = false) {
  state.editing = null;
  form.reset();
  clearFieldErrors();
  $('editor-heading').textContent = 'New user';
  $('editor-badge').hidden = true;
  $('editor-intro').replaceChildren('Sends ', el('code', { text: 'POST /api/users' }),
    '. The server judges every field: this page checks nothing itself, so you see its 400 answers.');
  saveButton.textContent = 'Create user';
  for (const id of ['put-button', 'edit-actions', 'etag-row', 'confirm-delete']) $(id).hidden = true;
  markSelectedRow();
  if (focus) nameInput.focus();
}

// cancelEdit leaves the user as it is, and takes the focus back to where the edit began: the
// row's Edit button, or the form's heading when that row is not on this page.
function cancelEdit() {
  const { id } = state.editing;
  startCreate();
  notice('');
  (rowButton(id, 'edit') || $('editor-heading')).focus();
}

function showUser(user, etag) {
  state.editing = { id: user.id, name: user.name, email: user.email, etag: etag || '' };
  clearFieldErrors();
  $('editor-heading').textContent = `Edit ${user.name}`;
  $('editor-badge').textContent = `/api/users/${user.id}`;
  $('editor-badge').hidden = false;
  $('editor-intro').replaceChildren(el('strong', { text: 'Save changes' }), ' sends ', el('code', { text: 'PATCH' }),
    ' with only the fields you changed, as a JSON Merge Patch; ', el('strong', { text: 'Replace' }), ' sends ',
    el('code', { text: 'PUT' }), ' with the whole user.');
  nameInput.value = user.name;
  emailInput.value = user.email;
  saveButton.textContent = 'Save changes (PATCH)';
  for (const id of ['put-button', 'edit-actions']) $(id).hidden = false;
  $('etag-row').hidden = !etag;
  $('etag-value').textContent = etag || '';
  $('confirm-delete').hidden = true;
  markSelectedRow();
}

async function startEdit(id, { thenDelete = false } = {}) {
  beginAction();
  notice('');
  const result = await send('GET', `/api/users/${id}`);
  if (result.status !== 200 || !result.json) {
    startCreate();
    showAlert($('form-alert'), result, { hint: result.status === 404 ? 'Someone deleted this user: the list is reloaded.' : '' });
    $('form-alert').focus(); // the row, and its button, may go when the list reloads
    if (result.status === 404) reloadList();
    return;
  }
  showUser(result.json, result.headers.get('ETag'));
  if (thenDelete) askDelete();
  else nameInput.focus();
}

function ifMatch() {
  return $('use-if-match').checked && state.editing.etag ? [['If-Match', state.editing.etag]] : [];
}

// missingETag keeps a change from going out without If-Match when the page holds no ETag for the
// user (reading it after a PUT failed): it says so, offers to read the user, and returns true.
function missingETag() {
  if (!state.editing || state.editing.etag || !$('use-if-match').checked) return false;
  showAlert($('form-alert'), {}, {
    warn: true,
    title: 'Not sent: the page holds no ETag for this user',
    hint: 'Without one, the change could overwrite someone else\'s. Reload the user, then make the change again.',
    actions: [linkButton('Reload the user', () => reloadUser({ focusName: true }))],
  });
  $('form-alert').focus();
  return true;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  if (busy) return; // Enter in a field submits too
  beginAction();
  notice('');
  clearFieldErrors();
  const name = nameInput.value;
  const email = emailInput.value;
  const editing = state.editing;
  if (missingETag()) return;
  setBusy(true);
  try {
    if (!editing) {
      await create(name, email);
    } else if (event.submitter === putButton) {
      await update(editing, 'PUT', { name, email }, 'application/json');
    } else {
      // A merge patch names only what changes. With nothing changed the body is {}, and the
      // server says why it refuses it: that is worth seeing too.
      const patch = {};
      if (name !== editing.name) patch.name = name;
      if (email !== editing.email) patch.email = email;
      await update(editing, 'PATCH', patch, 'application/merge-patch+json');
    }
  } finally {
    setBusy(false);
  }
});

async function create(name, email) {
  const result = await send('POST', '/api/users', { body: { name, email } });
  if (result.status !== 201) {
    showWriteError(result);
    return;
  }
  const created = result.json || {}; // the new user, unless the answer had no JSON after all
  const location = result.headers.get('Location');
  startCreate();
  notice(created.id ? `Created ${created.name}: the server gave it id ${created.id}, and its URI in Location: ${location}.`
    : `Created: the server gave its URI in Location: ${location}.`);
  state.freshId = created.id || 0;
  // In id order a new user is last: show the page it is on.
  const { sort, q, perPage, total } = state.list;
  const page = sort === 'id' && !q ? Math.max(1, Math.ceil((total + 1) / perPage)) : state.list.page;
  await loadList(listPath(page), { quiet: true });
  nameInput.focus();
}

async function update(editing, method, body, contentType) {
  const result = await send(method, `/api/users/${editing.id}`, { body, contentType, headers: ifMatch() });
  if (result.status !== 200 || !result.json) {
    showWriteError(result);
    return;
  }
  const etag = result.headers.get('ETag');
  if (etag) { // PATCH: the answer names the stored user's ETag
    showUser(result.json, etag);
    notice(`Saved with ${method}. The answer carries the new ETag, so the next change can send If-Match without reading first.`);
  } else {
    await readAfterPut(editing.id, result.json);
  }
  await reloadList();
}

// readAfterPut reads the user again after a PUT, for its ETag. A PUT answer carries none (RFC 9110
// §9.3.4: a validator may come with it only when the body was stored as it was sent, and the server
// trims it and adds the id), and the next save must send If-Match with the ETag of what the form
// shows: never an older one, never none. So the form shows the user as this read gives it.
async function readAfterPut(id, saved) {
  const read = await send('GET', `/api/users/${id}`, {
    why: 'Sent by the page after the PUT: a PUT answer carries no ETag (RFC 9110 §9.3.4), so it reads the user for the ETag its next change sends in If-Match.',
  });
  const etag = read.headers.get('ETag');
  if (read.status === 200 && read.json && etag) {
    showUser(read.json, etag);
    if (read.json.name === saved.name && read.json.email === saved.email) {
      notice('Saved with PUT. Its answer carries no ETag (the server stored the body trimmed, with the id added), so the page read the user again: the next change sends that ETag in If-Match.');
    } else {
      notice('Saved with PUT, but someone changed the user right after: the form shows their version now, read again with its ETag.', 'info');
    }
    return;
  }
  if (read.status === 404) {
    showWriteError(read);
    return;
  }
  showUser(saved, ''); // saved, but with no ETag: the next change waits for one (missingETag)
  showAlert($('form-alert'), read, {
    title: 'Saved with PUT, but the user could not be read again for its ETag',
    hint: 'A PUT answer carries no ETag. Reload the user before the next change, so that it can send If-Match.',
    actions: [linkButton('Reload the user', () => reloadUser({ focusName: true }))],
  });
  $('form-alert').focus();
}

function showWriteError(result) {
  const fields = result.json && result.json.fields;
  let focusField = '';
  if (result.status === 400 && fields) {
    for (const field of ['name', 'email']) {
      if (fields[field]) {
        showFieldError(field, fields[field]);
        focusField = focusField || field;
      }
    }
  }
  if (result.status === 409) {
    showFieldError('email', result.json ? result.json.error : 'another user already has this email');
    focusField = 'email';
  }
  const options = {};
  if (result.status === 412) {
    options.warn = true;
    options.title = '412 Precondition Failed: someone else changed this user';
    options.hint = 'Nothing was saved. Reload to see their change, then make yours again.';
    options.actions = [linkButton('Reload the user', () => reloadUser({ focusName: true }))];
  } else if (result.status === 404) {
    options.hint = 'Someone deleted this user meanwhile.';
    options.actions = [linkButton('Start a new user', () => startCreate(true))];
    reloadList();
  } else if (result.status === 401) {
    options.hint = 'Check the token at the top of the page.';
  } else if (result.status === 403) {
    options.hint = 'Enter a token with the write role at the top of the page.';
  }
  showAlert($('form-alert'), result, options);
  // The focus goes to what needs fixing: the first field the server refused, or else the alert
  // (it has tabindex="-1"), whose buttons are the next stops.
  (focusField ? $(focusField) : $('form-alert')).focus();
}

// reloadUser reads the user again, sending If-None-Match: 304 means the copy in the form is current.
// focusName: it was asked from the 412 alert, which goes now, so the focus goes on to the name.
async function reloadUser({ focusName = false } = {}) {
  const editing = state.editing;
  if (!editing) return;
  notice('');
  const headers = editing.etag ? [['If-None-Match', editing.etag]] : [];
  const result = await send('GET', `/api/users/${editing.id}`, { headers });
  if (result.status === 304) {
    clearFieldErrors();
    notice('304 Not Modified: the user is as you read it, so the server sent no body.', 'info');
    if (focusName) nameInput.focus();
    return;
  }
  if (result.status === 200 && result.json) {
    showUser(result.json, result.headers.get('ETag'));
    notice(editing.etag ? 'Reloaded: the user had changed, and the form now shows it, with its new ETag.'
      : 'Reloaded: the form shows the user as the server has it, with its ETag for the next change.', 'info');
    if (focusName) nameInput.focus();
    await reloadList();
    return;
  }
  showWriteError(result);
}

$('reload-button').addEventListener('click', () => {
  beginAction();
  reloadUser();
});
$('cancel-button').addEventListener('click', cancelEdit);
// Escape cancels an edit, as Cancel does; in the delete confirmation it only closes that (below).
form.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && state.editing && !busy) {
    event.preventDefault();
    cancelEdit();
  }
});
$('new-user').addEventListener('click', () => {
  startCreate(true);
  notice('');
});

function askDelete() {
  const { id, name } = state.editing;
  $('confirm-text').replaceChildren('Delete ', el('strong', { text: name }), ` (id ${id})? This cannot be undone.`);
  $('confirm-delete').hidden = false;
  $('confirm-no').focus();
}

$('delete-button').addEventListener('click', askDelete);
$('confirm-no').addEventListener('click', () => {
  $('confirm-delete').hidden = true;
  $('delete-button').focus();
});
$('confirm-delete').addEventListener('keydown', (event) => {
  if (event.key === 'Escape') {
    event.stopPropagation(); // the edit stays open
    $('confirm-no').click();
  }
});

$('confirm-yes').addEventListener('click', async () => {
  const editing = state.editing;
  beginAction();
  notice('');
  clearFieldErrors();
  if (missingETag()) {
    $('confirm-delete').hidden = true;
    return;
  }
  setBusy(true);
  const result = await send('DELETE', `/api/users/${editing.id}`, { headers: ifMatch() });
  setBusy(false);
  if (result.status !== 204) {
    $('confirm-delete').hidden = true;
    showWriteError(result);
    return;
  }
  startCreate();
  notice(`Deleted ${editing.name} (id ${editing.id}). The answer was 204 No Content: nothing more to say.`);
  $('editor-heading').focus();
  await reloadList();
  if (!state.list.users.length && state.list.total > 0 && state.list.links.last) await loadList(state.list.links.last, { quiet: true });
});

// ---------------------------------------------------------------------------------------------
// Start

$('per-page').value = String(state.list.perPage);
showTokenState();
startCreate();
if (state.token) {
  tokenInput.value = state.token;
  loadList(listPath(1));
} else {
  showNoToken();
}
