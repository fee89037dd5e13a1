/**
 * fast-check generators for property tests of the handler: keyrings, header lists as a client sends them, the
 * events API Gateway (or a test console, or a broken tool) would build from them, Content-Type values and
 * bodies. They aim at the edges: random case, repeats, odd whitespace, wrong types, missing fields.
 */
import fc from 'fast-check';
import { toDigestForm } from '../../../shared/keys/key-material';
import { apiGatewayHeaderMaps, baseEvent } from '../events';
import { blockBits, formatIpv4, formatIpv6, type Family } from './network-model';

/** The instant the handler's clock reads in the property tests; keys expire around it. */
export const CONTRACT_NOW = Date.parse('2026-11-21T12:00:00Z');

export interface KeySpec {
  /** The plain key the client sends. */
  readonly key: string;
  /** Stored in the secret as its `sha256:` digest. */
  readonly hashed: boolean;
  /** Epoch milliseconds from which it is refused; absent: never. */
  readonly expiresAt?: number;
  /** The UTC offset, in minutes, the secret writes `expires` with (0: `Z`). */
  readonly offsetMinutes?: number;
}

export interface AppSpec {
  readonly appId: string;
  readonly keys: readonly KeySpec[];
  /** The app's `allowedCidrs`; absent: no allowlist (any network). */
  readonly allowedCidrs?: readonly string[];
}

/** Characters that parsers get wrong: Unicode spaces, BOM, lone surrogates, separators, quotes, controls. */
export const trickyChar = fc.constantFrom(
  ' ',
  '\t',
  '\n',
  '\r',
  '\u00a0',
  '\u000b',
  '\f',
  '\u0085',
  '\u2028',
  '\u2029',
  '\u3000',
  '\ufeff',
  '\ud800',
  '\udc00',
  '"',
  '\\',
  ';',
  '=',
  ',',
  '/',
  '\u0000',
  '\u007f',
  '\u00e9',
  '\u20ac',
  '\u{1f600}',
);

/** Mostly printable ASCII, often a tricky character. */
export const edgyString = (maxLength = 12): fc.Arbitrary<string> =>
  fc.string({
    unit: fc.oneof({ weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 1 }) }, trickyChar),
    maxLength,
  });

export const appIdArb = fc.oneof(fc.constant('demo'), fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,8}$/));

export const plainKeyArb = fc
  .stringMatching(/^[\x21-\x7e]{16,32}$/)
  .filter((key) => !key.startsWith('sha256:'));

const DAY_MS = 86_400_000;

/** Mostly no expiry; otherwise just before, at and just after the clock, or well either side of it. */
const expiryArb: fc.Arbitrary<Pick<KeySpec, 'expiresAt' | 'offsetMinutes'>> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({}) },
  {
    weight: 3,
    arbitrary: fc.record({
      expiresAt: fc
        .constantFrom(-DAY_MS, -1_000, -1, 0, 1, 1_000, DAY_MS, 30 * DAY_MS)
        .map((offset) => CONTRACT_NOW + offset),
      offsetMinutes: fc.constantFrom(0, 0, 60, -300, 330, 14 * 60, -12 * 60),
    }),
  },
);

/** A block with its host bits zero, as the secret must hold it; IPv6 in global unicast space (2000::/3). */
const blockArb: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      fc.bigInt({ min: 0n, max: (1n << 32n) - 1n }),
      fc.oneof(fc.integer({ min: 8, max: 32 }), fc.constant(0)),
    )
    .map(([value, prefix]) => {
      const { network } = blockBits(4, value, prefix);
      return prefix === 32 ? formatIpv4(network) : `${formatIpv4(network)}/${prefix}`;
    }),
  fc
    .tuple(
      fc.bigInt({ min: 0x2000n << 112n, max: (0x4000n << 112n) - 1n }),
      fc.integer({ min: 3, max: 128 }),
      fc.boolean(),
    )
    .map(
      ([value, prefix, compress]) => `${formatIpv6(blockBits(6, value, prefix).network, compress)}/${prefix}`,
    ),
);

/** Mostly none; sometimes a few blocks; sometimes the empty list, which allows no network. */
const allowlistArb: fc.Arbitrary<readonly string[] | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.uniqueArray(blockArb, { minLength: 1, maxLength: 3 }) },
  { weight: 1, arbitrary: fc.constant([]) },
);

export const keyringArb: fc.Arbitrary<readonly AppSpec[]> = fc.uniqueArray(
  fc.record(
    {
      appId: appIdArb,
      keys: fc.uniqueArray(
        fc
          .tuple(fc.record({ key: plainKeyArb, hashed: fc.boolean() }), expiryArb)
          .map(([key, expiry]): KeySpec => ({ ...key, ...expiry })),
        { minLength: 1, maxLength: 3, selector: ({ key }) => key },
      ),
      allowedCidrs: allowlistArb,
    },
    { requiredKeys: ['appId', 'keys'] },
  ),
  { minLength: 1, maxLength: 4, selector: ({ appId }) => appId },
);

/** `2026-11-21T17:30:00.000+05:30`: the instant written in the offset an operator might use. */
function rfc3339(instant: number, offsetMinutes: number): string {
  if (offsetMinutes === 0) return new Date(instant).toISOString();
  const local = new Date(instant + offsetMinutes * 60_000).toISOString().slice(0, -1);
  const magnitude = Math.abs(offsetMinutes);
  const hours = String(Math.floor(magnitude / 60)).padStart(2, '0');
  const minutes = String(magnitude % 60).padStart(2, '0');
  return `${local}${offsetMinutes < 0 ? '-' : '+'}${hours}:${minutes}`;
}

/** The secret's text for a keyring spec, as an operator would store it, in whichever form each entry needs. */
export function secretOf(apps: readonly AppSpec[]): string {
  const keyEntry = ({ key, hashed, expiresAt, offsetMinutes = 0 }: KeySpec): unknown => {
    const stored = hashed ? toDigestForm(key) : key;
    return expiresAt === undefined ? stored : { key: stored, expires: rfc3339(expiresAt, offsetMinutes) };
  };
  return JSON.stringify(
    Object.fromEntries(
      apps.map(({ appId, keys, allowedCidrs }) => [
        appId,
        allowedCidrs === undefined ? keys.map(keyEntry) : { keys: keys.map(keyEntry), allowedCidrs },
      ]),
    ),
  );
}

/** An address inside `cidr`: its network with random host bits; an IPv4 one sometimes IPv4-mapped. */
function addressInside(cidr: string): fc.Arbitrary<string> {
  const [network = '', prefixText] = cidr.split('/');
  const family: Family = network.includes(':') ? 6 : 4;
  const bits = family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  const networkValue =
    family === 4
      ? network.split('.').reduce((value, part) => (value << 8n) | BigInt(part), 0n)
      : expandedIpv6Value(network);
  const { hostMask } = blockBits(family, 0n, prefix);
  return fc.tuple(fc.bigInt({ min: 0n, max: hostMask }), fc.boolean()).map(([host, mapped]) => {
    const value = networkValue | host;
    if (family === 6) return formatIpv6(value, mapped);
    return mapped ? `::ffff:${formatIpv4(value)}` : formatIpv4(value);
  });
}

/** The value of an IPv6 address as formatIpv6 writes it (`::` at most once, no IPv4 tail). */
function expandedIpv6Value(text: string): bigint {
  const [head = '', tail] = text.split('::');
  const groups = (side: string): string[] => (side === '' ? [] : side.split(':'));
  const before = groups(head);
  const after = tail === undefined ? [] : groups(tail);
  const all = [...before, ...Array<string>(8 - before.length - after.length).fill('0'), ...after];
  return all.reduce((value, group) => (value << 16n) | BigInt(`0x${group}`), 0n);
}

/**
 * The caller's address API Gateway reports: often inside one of the apps' blocks, sometimes anywhere, sometimes
 * missing or not an address at all.
 */
export function sourceIpArb(apps: readonly AppSpec[]): fc.Arbitrary<unknown> {
  const blocks = apps.flatMap(({ allowedCidrs = [] }) => allowedCidrs);
  const anywhere = fc.oneof(
    fc.bigInt({ min: 0n, max: (1n << 32n) - 1n }).map(formatIpv4),
    fc.bigInt({ min: 0x2000n << 112n, max: (0x4000n << 112n) - 1n }).map((value) => formatIpv6(value, true)),
  );
  const notAnAddress = fc.constantFrom<unknown>(
    undefined,
    '',
    'unknown',
    '1.2.3',
    '01.2.3.4',
    '::ffff:999.1.1.1',
    7,
  );
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(baseEvent.requestContext.identity.sourceIp) },
    ...(blocks.length === 0
      ? []
      : [{ weight: 6, arbitrary: fc.constantFrom(...blocks).chain(addressInside) }]),
    { weight: 2, arbitrary: anywhere },
    { weight: 1, arbitrary: notAnAddress },
  );
}

export interface Credentials {
  readonly appId: string;
  readonly appKey: string;
}

/** Mostly a right key, and every way of being wrong: another key, another app's, unknown app, spaces, case. */
export function credentialsArb(apps: readonly AppSpec[]): fc.Arbitrary<Credentials> {
  const app = fc.constantFrom(...apps);
  const rightKey = app.chain(({ appId, keys }) =>
    fc.constantFrom(...keys).map(({ key }) => ({ appId, appKey: key })),
  );
  return fc.oneof(
    { weight: 14, arbitrary: rightKey },
    { weight: 1, arbitrary: fc.tuple(app, plainKeyArb).map(([{ appId }, appKey]) => ({ appId, appKey })) },
    {
      weight: 1,
      arbitrary: fc.tuple(app, rightKey).map(([{ appId }, other]) => ({ appId, appKey: other.appKey })),
    },
    { weight: 1, arbitrary: fc.tuple(appIdArb, rightKey).map(([appId, { appKey }]) => ({ appId, appKey })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(rightKey, fc.constantFrom(' ', '\t', '\u00a0', '\n'))
        .map(([{ appId, appKey }, space]) => ({ appId, appKey: space + appKey })),
    },
    { weight: 1, arbitrary: rightKey.map(({ appId, appKey }) => ({ appId: appId.toUpperCase(), appKey })) },
    {
      weight: 1,
      arbitrary: fc.record({ appId: fc.constantFrom('', ' '), appKey: fc.constantFrom('', 'x') }),
    },
  );
}

/** `application/json` in random case with parameters, other types, odd whitespace, and junk. */
export const contentTypeArb: fc.Arbitrary<string> = (() => {
  const ows = fc.constantFrom('', ' ', '\t', ' \t ');
  const oddSpace = fc.constantFrom('\u00a0', '\u000b', '\f', '\u2028', '\r\n', '\u3000', '\ufeff');
  const token = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,8}$/);
  const quoted = fc
    .string({
      unit: fc.oneof(
        fc.string({ minLength: 1, maxLength: 1 }),
        fc.constantFrom(
          '\\"',
          '\\\\',
          '\u00e9',
          '\t',
          '\\\u00e9',
          '\\\u0001',
          '\\\u20ac',
          '\u0001',
          '\u20ac',
        ),
      ),
      maxLength: 6,
    })
    .map((inner) => `"${inner}"`);
  const charsetValue = fc.constantFrom(
    'utf-8',
    'UTF-8',
    '"utf-8"',
    '"Utf-8"',
    'utf8',
    'latin1',
    '"iso-8859-1"',
    'utf-16',
  );
  const parameter = fc.oneof(
    fc.tuple(fc.mixedCase(fc.constant('charset')), charsetValue).map(([name, value]) => `${name}=${value}`),
    fc.tuple(token, fc.oneof(token, quoted)).map(([name, value]) => `${name}=${value}`),
    fc.constant(''),
  );
  const parameters = fc
    .array(fc.tuple(ows, ows, parameter), { maxLength: 3 })
    .map((items) => items.map(([before, after, item]) => `${before};${after}${item}`).join(''));
  const mediaType = fc.oneof(
    { weight: 6, arbitrary: fc.mixedCase(fc.constant('application/json')) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/jsonx',
        'application/problem+json',
        'application/ json',
        'json',
      ),
    },
    { weight: 1, arbitrary: fc.tuple(token, token).map(([type, subtype]) => `${type}/${subtype}`) },
  );
  const wellFormed = fc.tuple(ows, mediaType, parameters, ows).map((parts) => parts.join(''));
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8') },
    { weight: 6, arbitrary: wellFormed },
    { weight: 2, arbitrary: fc.tuple(oddSpace, wellFormed).map(([space, value]) => space + value) },
    { weight: 2, arbitrary: fc.tuple(wellFormed, oddSpace).map(([value, space]) => value + space) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.mixedCase(fc.constant('application/json')), oddSpace, parameters)
        .map((parts) => parts.join('')),
    },
    { weight: 1, arbitrary: edgyString(20) },
  );
})();

/** Characters outside `tchar`: separators, controls, and code points past U+00FF. */
const nonTokenChar = fc.constantFrom(
  '(',
  ')',
  ',',
  '/',
  ':',
  ';',
  '<',
  '=',
  '>',
  '?',
  '@',
  '[',
  '\\',
  ']',
  '{',
  '}',
  '"',
  ' ',
  '\t',
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0080',
  '\u00ff',
  '\u0100',
  '\u20ac',
);

/** Short strings over every code unit up to U+00FF, and a few beyond: each character class of the grammar. */
const anyLatin1 = (maxLength: number): fc.Arbitrary<string> =>
  fc.string({
    unit: fc.oneof(
      fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }),
      fc.constantFrom('\\', '"', '\u0100', '\u20ac'),
    ),
    minLength: 1,
    maxLength,
  });

/** `application/json` with one part made of arbitrary characters: a type, a parameter, or a quoted-string. */
export const contentTypePartsArb: fc.Arbitrary<string> = fc.oneof(
  anyLatin1(3).map((subtype) => `application/${subtype}`),
  anyLatin1(3).map((name) => `application/json; ${name}=1`),
  anyLatin1(3).map((value) => `application/json; charset=${value}`),
  anyLatin1(4).map((inner) => `application/json; x="${inner}"`),
);

/** A Content-Type one character away from a generated one: what a lenient parser would let through. */
export const contentTypeNearMissArb: fc.Arbitrary<string> = fc
  .tuple(contentTypeArb, fc.nat(), fc.oneof(nonTokenChar, trickyChar), fc.boolean())
  .map(([value, at, character, replace]) => {
    const index = at % (value.length + 1);
    return value.slice(0, index) + character + value.slice(replace ? index + 1 : index);
  });

/** JSON texts, near misses, whitespace of every kind, and BOMs, as the text a client meant to send. */
export const bodyTextArb: fc.Arbitrary<string> = (() => {
  const jsonWhitespace = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), maxLength: 4 });
  const json = fc.json({ maxDepth: 2 });
  const padded = fc.tuple(jsonWhitespace, json, jsonWhitespace).map((parts) => parts.join(''));
  return fc.oneof(
    { weight: 4, arbitrary: padded },
    { weight: 2, arbitrary: jsonWhitespace },
    { weight: 1, arbitrary: fc.constant('') },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom('\ufeff', '\ufeff\ufeff', ' \ufeff'), fc.oneof(padded, jsonWhitespace))
        .map((parts) => parts.join('')),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(trickyChar, fc.oneof(json, jsonWhitespace)).map((parts) => parts.join('')),
    },
    { weight: 1, arbitrary: json.map((text) => text.slice(0, -1)) },
    { weight: 2, arbitrary: edgyString(16) },
    // Around the nesting limit (64), as arrays or objects, sometimes with brackets inside a string.
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 62, max: 66 }), fc.constantFrom(['[', ']'], ['{"a":', '}']), fc.boolean())
        .map(([depth, [open, close], quoted]) => {
          const inner = quoted ? '"]]}}[["' : '0';
          return open.repeat(depth) + inner + close.repeat(depth);
        }),
    },
    // Around the size limit (65,536 bytes as sent), in one-byte or two-byte characters.
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: -3, max: 3 }), fc.constantFrom('a', 'é'))
        .map(([offset, unit]) => `"${unit.repeat((65_534 + offset) / Buffer.byteLength(unit))}"`),
    },
  );
})();

/** The event's `body` and `isBase64Encoded` fields; `undefined` leaves a field out. */
export interface BodyFields {
  readonly body: unknown;
  readonly isBase64Encoded: unknown;
}

const absentOrOdd = fc.constantFrom<unknown>(undefined, false, null, 'true', 1);

export const bodyFieldsArb: fc.Arbitrary<BodyFields> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ body: bodyTextArb, isBase64Encoded: absentOrOdd }) },
  {
    weight: 3,
    arbitrary: bodyTextArb.map((text) => ({
      body: Buffer.from(text, 'utf8').toString('base64'),
      isBase64Encoded: true,
    })),
  },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ maxLength: 8 })
      .map((bytes) => ({ body: Buffer.from(bytes).toString('base64'), isBase64Encoded: true })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(bodyTextArb, fc.constantFrom('', '=', '==', '!')).map(([text, mangle]) => ({
      body: Buffer.from(text).toString('base64').replace(/=+$/, '') + mangle,
      isBase64Encoded: true,
    })),
  },
  {
    weight: 1,
    arbitrary: fc.record({ body: fc.constantFrom(undefined, null), isBase64Encoded: absentOrOdd }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      body: fc.oneof(
        fc.integer(),
        fc.boolean(),
        fc.array(fc.string(), { maxLength: 2 }),
        fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
      ),
      isBase64Encoded: absentOrOdd,
    }),
  },
);

export type HeaderPair = readonly [string, string];

/** The headers a client sends, names in random case, with occasional repeats and unrelated headers. */
export function headerPairsArb(apps: readonly AppSpec[]): fc.Arbitrary<HeaderPair[]> {
  const named = (name: string, value: fc.Arbitrary<string>): fc.Arbitrary<HeaderPair> =>
    fc.tuple(fc.mixedCase(fc.constant(name)), value);
  /** Present 7 times in 8. */
  const usually = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
    fc.option(arbitrary, { nil: undefined, freq: 8 });
  /** Present once in 6. */
  const rarely = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
    fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
  return fc
    .record({
      credentials: credentialsArb(apps),
      contentType: usually(contentTypeArb),
      names: fc.record({
        appId: fc.mixedCase(fc.constant('App-id')),
        appKey: fc.mixedCase(fc.constant('App-key')),
        contentType: fc.mixedCase(fc.constant('Content-Type')),
      }),
      repeat: rarely(
        fc.oneof(
          named(
            'App-key',
            fc.oneof(
              plainKeyArb,
              credentialsArb(apps).map(({ appKey }) => appKey),
            ),
          ),
          named('App-id', appIdArb),
          named('Content-Type', contentTypeArb),
        ),
      ),
      others: fc.array(
        fc.tuple(
          fc.constantFrom('User-Agent', 'Accept', 'X-Forwarded-For', 'App-idx', 'App_key'),
          edgyString(),
        ),
        { maxLength: 2 },
      ),
      omit: fc.oneof(
        { weight: 10, arbitrary: fc.constant('none') },
        { weight: 1, arbitrary: fc.constantFrom('appId', 'appKey') },
      ),
    })
    .chain(({ credentials, contentType, names, repeat, others, omit }) => {
      const pairs: HeaderPair[] = repeat === undefined ? [...others] : [...others, repeat];
      if (omit !== 'appId') pairs.push([names.appId, credentials.appId]);
      if (omit !== 'appKey') pairs.push([names.appKey, credentials.appKey]);
      if (contentType !== undefined) pairs.push([names.contentType, contentType]);
      return fc.shuffledSubarray(pairs, { minLength: pairs.length, maxLength: pairs.length });
    });
}

/** What a broken event may hold where a value or a map belongs. */
const oddValue = fc.constantFrom<unknown>(null, undefined, 42, 0, true, [], [null], ['x', 7], 'bare', {
  value: 'x',
});

/** One change that a tool or a hand-written test event might make to API Gateway's shape. */
const damageArb = fc.oneof(
  fc.record({
    kind: fc.constant('entry' as const),
    map: fc.constantFrom('headers', 'multiValueHeaders'),
    name: fc.oneof(
      fc.mixedCase(fc.constant('App-key')),
      fc.mixedCase(fc.constant('App-id')),
      fc.mixedCase(fc.constant('Content-Type')),
    ),
    value: oddValue,
  }),
  fc.record({
    kind: fc.constant('map' as const),
    map: fc.constantFrom('headers', 'multiValueHeaders'),
    value: oddValue,
  }),
);

type Damage = typeof damageArb extends fc.Arbitrary<infer T> ? T : never;

function damaged(maps: Record<string, unknown>, damage: Damage): Record<string, unknown> {
  if (damage.kind === 'map') return { ...maps, [damage.map]: damage.value };
  const current = maps[damage.map];
  const map = typeof current === 'object' && current !== null && !Array.isArray(current) ? current : {};
  return { ...maps, [damage.map]: { ...map, [damage.name]: damage.value } };
}

const requestContextArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant<unknown>(baseEvent.requestContext) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.constantFrom<unknown>('', 'id with space', 'line\r\nbreak', 7, null, 'x'.repeat(129)),
        edgyString(8),
      )
      .map((requestId) => ({ ...baseEvent.requestContext, requestId })),
  },
  { weight: 1, arbitrary: oddValue },
);

/** The request context with `identity.sourceIp` set, when it is an object with an identity to hold it. */
function withSourceIp(requestContext: unknown, sourceIp: unknown): unknown {
  if (typeof requestContext !== 'object' || requestContext === null || Array.isArray(requestContext)) {
    return requestContext;
  }
  const context = requestContext as Record<string, unknown>;
  const identity = context.identity;
  if (typeof identity !== 'object' || identity === null) return requestContext;
  return { ...context, identity: withoutUndefined({ ...identity, sourceIp }) };
}

/** Leaves out the fields whose value is undefined, as a hand-written event would. */
function withoutUndefined(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/** An event built from a client's request: mostly API Gateway's shape, sometimes damaged, rarely not an object. */
export function eventArb(apps: readonly AppSpec[]): fc.Arbitrary<unknown> {
  const shaped = fc
    .record({
      pairs: headerPairsArb(apps),
      damage: fc.oneof(
        { weight: 3, arbitrary: fc.constant<Damage[]>([]) },
        { weight: 1, arbitrary: fc.array(damageArb, { minLength: 1, maxLength: 2 }) },
      ),
      body: bodyFieldsArb,
      requestContext: requestContextArb,
      sourceIp: sourceIpArb(apps),
    })
    .map(({ pairs, damage, body, requestContext, sourceIp }) => {
      const maps = damage.reduce<Record<string, unknown>>(damaged, { ...apiGatewayHeaderMaps(pairs) });
      return withoutUndefined({
        ...baseEvent,
        ...maps,
        ...body,
        requestContext: withSourceIp(requestContext, sourceIp),
      });
    });
  return fc.oneof(
    { weight: 40, arbitrary: shaped },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, null, 42, 'event', []) },
  );
}
