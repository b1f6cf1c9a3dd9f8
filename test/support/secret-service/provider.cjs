'use strict';
// A Secret Service (org.freedesktop.secrets) for tests, on dbus-next: one collection (alias
// "default"), items in memory, sessions "plain" and "dh-ietf1024-sha256-aes128-cbc-pkcs7"
// (https://specifications.freedesktop.org/secret-service/latest/ch07s03.html: the 1024-bit MODP
// group of RFC 2409, HKDF-SHA256 with no salt and no info to a 16-byte key, AES-128-CBC, PKCS#7).
// It runs in a child process: the keyring addon's calls are synchronous, so a provider on the
// caller's thread would deadlock. The parent steers it over IPC (see secret-service.ts).
const crypto = require('node:crypto');
const dbus = require('dbus-next');

const { Interface, ACCESS_READ } = dbus.interface;
const { Variant, DBusError } = dbus;
const ROOT = '/org/freedesktop/secrets';
const COLLECTION = `${ROOT}/collection/login`;
const NO_PROMPT = '/';

/** @type {Map<string, {attributes: Record<string,string>, label: string, secret: Buffer, contentType: string, created: number}>} */
const items = new Map();
/** @type {Map<string, {key: Buffer | undefined, iface: Interface}>} */
const sessions = new Map();
let nextId = 1;
/** When set, every call fails with this D-Bus error name (a provider that refuses). */
let failWith;
/** When true, the collection is locked and Unlock's prompt is dismissed. */
let isLocked = false;
/** When true, the `default` alias names no collection (a keyring set up with none). */
let hasNoDefault = false;
const calls = [];
/** The 1024-bit MODP group of RFC 2409 §6.2 (Oakley group 2), generator 2. */
const dh = crypto.createDiffieHellman(crypto.getDiffieHellman('modp2').getPrime(), 2);
/** The next session's key pair, made ahead so that OpenSession answers at once. */
let nextKeys;
function prepareKeys() {
  const privateKey = crypto.randomBytes(32);
  dh.setPrivateKey(privateKey);
  nextKeys = { privateKey, publicKey: dh.generateKeys() };
}
prepareKeys();

function guard(member) {
  calls.push(member);
  if (failWith !== undefined) throw new DBusError(failWith, `refused by the test provider (${member})`);
}

function matches(attributes, wanted) {
  return Object.entries(wanted).every(([k, v]) => attributes[k] === v);
}

function itemPaths(wanted) {
  return [...items].filter(([, item]) => matches(item.attributes, wanted)).map(([path]) => path);
}

function encodeSecret(sessionPath, secret, contentType) {
  const session = sessions.get(sessionPath);
  if (session === undefined) throw new DBusError('org.freedesktop.Secret.Error.NoSession', 'no such session');
  if (session.key === undefined) return [sessionPath, Buffer.alloc(0), secret, contentType];
  const iv = crypto.randomBytes(16);
  const cipher = crypto.createCipheriv('aes-128-cbc', session.key, iv);
  return [sessionPath, iv, Buffer.concat([cipher.update(secret), cipher.final()]), contentType];
}

function decodeSecret([sessionPath, parameters, value, contentType]) {
  const session = sessions.get(sessionPath);
  if (session === undefined) throw new DBusError('org.freedesktop.Secret.Error.NoSession', 'no such session');
  if (session.key === undefined) return { secret: Buffer.from(value), contentType };
  const decipher = crypto.createDecipheriv('aes-128-cbc', session.key, Buffer.from(parameters));
  return { secret: Buffer.concat([decipher.update(Buffer.from(value)), decipher.final()]), contentType };
}

class Session extends Interface {
  constructor(path) {
    super('org.freedesktop.Secret.Session');
    this.path = path;
  }
  Close() {
    sessions.delete(this.path);
    bus.unexport(this.path, this);
  }
}
Session.configureMembers({ methods: { Close: { inSignature: '', outSignature: '' } } });

class Item extends Interface {
  constructor(path) {
    super('org.freedesktop.Secret.Item');
    this.path = path;
  }
  get record() {
    const item = items.get(this.path);
    if (item === undefined) throw new DBusError('org.freedesktop.Secret.Error.NoSuchObject', 'no such item');
    return item;
  }
  get Locked() {
    return isLocked;
  }
  get Attributes() {
    return this.record.attributes;
  }
  get Label() {
    return this.record.label;
  }
  get Created() {
    return this.record.created;
  }
  get Modified() {
    return this.record.created;
  }
  Delete() {
    guard('Item.Delete');
    this.record;
    items.delete(this.path);
    bus.unexport(this.path, this);
    return NO_PROMPT;
  }
  GetSecret(session) {
    guard('Item.GetSecret');
    if (isLocked) throw new DBusError('org.freedesktop.Secret.Error.IsLocked', 'the collection is locked');
    return encodeSecret(session, this.record.secret, this.record.contentType);
  }
  SetSecret(secret) {
    guard('Item.SetSecret');
    const { secret: value, contentType } = decodeSecret(secret);
    Object.assign(this.record, { secret: value, contentType });
  }
}
Item.configureMembers({
  properties: {
    Locked: { signature: 'b', access: ACCESS_READ },
    Attributes: { signature: 'a{ss}', access: ACCESS_READ },
    Label: { signature: 's', access: ACCESS_READ },
    Created: { signature: 't', access: ACCESS_READ },
    Modified: { signature: 't', access: ACCESS_READ },
  },
  methods: {
    Delete: { inSignature: '', outSignature: 'o' },
    GetSecret: { inSignature: 'o', outSignature: '(oayays)' },
    SetSecret: { inSignature: '(oayays)', outSignature: '' },
  },
});

class Collection extends Interface {
  constructor() {
    super('org.freedesktop.Secret.Collection');
  }
  get Items() {
    return [...items.keys()];
  }
  get Label() {
    return 'Login';
  }
  get Locked() {
    return isLocked;
  }
  get Created() {
    return 0;
  }
  get Modified() {
    return 0;
  }
  SearchItems(attributes) {
    guard('Collection.SearchItems');
    return itemPaths(attributes);
  }
  CreateItem(properties, secret, replace) {
    guard('Collection.CreateItem');
    if (isLocked) throw new DBusError('org.freedesktop.Secret.Error.IsLocked', 'the collection is locked');
    const attributes = properties['org.freedesktop.Secret.Item.Attributes']?.value ?? {};
    const label = properties['org.freedesktop.Secret.Item.Label']?.value ?? '';
    const { secret: value, contentType } = decodeSecret(secret);
    const existing = replace
      ? itemPaths(attributes).find((path) => matches(items.get(path).attributes, attributes))
      : undefined;
    if (existing !== undefined) {
      Object.assign(items.get(existing), { secret: value, contentType, label });
      return [existing, NO_PROMPT];
    }
    const path = `${COLLECTION}/${nextId++}`;
    items.set(path, { attributes, label, secret: value, contentType, created: Math.floor(Date.now() / 1000) });
    bus.export(path, new Item(path));
    return [path, NO_PROMPT];
  }
  Delete() {
    throw new DBusError('org.freedesktop.DBus.Error.NotSupported', 'the test collection cannot be deleted');
  }
}
Collection.configureMembers({
  properties: {
    Items: { signature: 'ao', access: ACCESS_READ },
    Label: { signature: 's', access: ACCESS_READ },
    Locked: { signature: 'b', access: ACCESS_READ },
    Created: { signature: 't', access: ACCESS_READ },
    Modified: { signature: 't', access: ACCESS_READ },
  },
  methods: {
    SearchItems: { inSignature: 'a{ss}', outSignature: 'ao' },
    CreateItem: { inSignature: 'a{sv}(oayays)b', outSignature: 'oo' },
    Delete: { inSignature: '', outSignature: 'o' },
  },
});

class Prompt extends Interface {
  constructor(path) {
    super('org.freedesktop.Secret.Prompt');
    this.path = path;
  }
  Prompt() {
    setTimeout(() => this.Completed(true, new Variant('s', '')), 5);
  }
  Dismiss() {
    this.Completed(true, new Variant('s', ''));
  }
  Completed(dismissed, result) {
    return [dismissed, result];
  }
}
Prompt.configureMembers({
  methods: { Prompt: { inSignature: 's', outSignature: '' }, Dismiss: { inSignature: '', outSignature: '' } },
  signals: { Completed: { signature: 'bv' } },
});

class Service extends Interface {
  constructor() {
    super('org.freedesktop.Secret.Service');
  }
  get Collections() {
    return [COLLECTION];
  }
  OpenSession(algorithm, input) {
    guard('Service.OpenSession');
    const path = `${ROOT}/session/${nextId++}`;
    let key;
    let output = new Variant('s', '');
    if (algorithm === 'dh-ietf1024-sha256-aes128-cbc-pkcs7') {
      // A fresh 256-bit private exponent per session, on the one group object (building one checks
      // the prime: about 45 ms, which would be paid by every mmauth run that opens a session).
      const ownPublic = nextKeys.publicKey;
      dh.setPrivateKey(nextKeys.privateKey);
      const shared = dh.computeSecret(Buffer.from(input.value));
      setImmediate(prepareKeys);
      key = Buffer.from(crypto.hkdfSync('sha256', shared, Buffer.alloc(0), Buffer.alloc(0), 16));
      output = new Variant('ay', ownPublic);
    } else if (algorithm !== 'plain') {
      throw new DBusError('org.freedesktop.DBus.Error.NotSupported', `algorithm ${algorithm} is not supported`);
    }
    const iface = new Session(path);
    sessions.set(path, { key, iface });
    bus.export(path, iface);
    return [output, path];
  }
  SearchItems(attributes) {
    guard('Service.SearchItems');
    const found = itemPaths(attributes);
    return isLocked ? [[], found] : [found, []];
  }
  Unlock(objects) {
    guard('Service.Unlock');
    if (!isLocked) return [objects, NO_PROMPT];
    const path = `${ROOT}/prompt/${nextId++}`;
    bus.export(path, new Prompt(path));
    return [[], path];
  }
  Lock(objects) {
    guard('Service.Lock');
    return [objects, NO_PROMPT];
  }
  GetSecrets(paths, session) {
    guard('Service.GetSecrets');
    const out = {};
    for (const path of paths) {
      const item = items.get(path);
      if (item !== undefined) out[path] = encodeSecret(session, item.secret, item.contentType);
    }
    return out;
  }
  ReadAlias(name) {
    guard('Service.ReadAlias');
    return name === 'default' && !hasNoDefault ? COLLECTION : NO_PROMPT;
  }
  SetAlias() {
    guard('Service.SetAlias');
  }
  CreateCollection() {
    guard('Service.CreateCollection');
    return [COLLECTION, NO_PROMPT];
  }
}
Service.configureMembers({
  properties: { Collections: { signature: 'ao', access: ACCESS_READ } },
  methods: {
    OpenSession: { inSignature: 'sv', outSignature: 'vo' },
    SearchItems: { inSignature: 'a{ss}', outSignature: 'aoao' },
    Unlock: { inSignature: 'ao', outSignature: 'aoo' },
    Lock: { inSignature: 'ao', outSignature: 'aoo' },
    GetSecrets: { inSignature: 'aoo', outSignature: 'a{o(oayays)}' },
    ReadAlias: { inSignature: 's', outSignature: 'o' },
    SetAlias: { inSignature: 'so', outSignature: '' },
    CreateCollection: { inSignature: 'a{sv}s', outSignature: 'oo' },
  },
});

const bus = dbus.sessionBus({ busAddress: process.env.DBUS_SESSION_BUS_ADDRESS });

/** What the parent can ask over IPC: the items (with their secrets), wipe, lock, refuse. */
function control(message) {
  switch (message.op) {
    case 'items':
      return [...items.values()].map((item) => ({
        attributes: item.attributes,
        label: item.label,
        secret: item.secret.toString('base64'),
      }));
    case 'wipe':
      for (const path of items.keys()) bus.unexport(path);
      items.clear();
      return true;
    case 'lock':
      isLocked = message.value === true;
      return true;
    case 'fail':
      failWith = message.value ?? undefined;
      return true;
    case 'noDefault':
      hasNoDefault = message.value === true;
      return true;
    case 'calls':
      return calls.splice(0);
    default:
      throw new Error(`unknown op ${message.op}`);
  }
}

async function main() {
  bus.export(ROOT, new Service());
  bus.export(COLLECTION, new Collection());
  bus.export(`${ROOT}/aliases/default`, new Collection());
  await bus.requestName('org.freedesktop.secrets', dbus.NameFlag.DO_NOT_QUEUE);
  process.on('message', (message) => {
    let reply;
    try {
      reply = { id: message.id, ok: true, value: control(message) };
    } catch (error) {
      reply = { id: message.id, ok: false, error: String(error) };
    }
    process.send(reply);
  });
  process.on('disconnect', () => process.exit(0));
  process.send?.({ ready: true });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
