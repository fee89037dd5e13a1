import {
  getNodeValue,
  printParseErrorCode,
  visit,
  type Node,
  type NodeType,
  type ParseError,
} from 'jsonc-parser';
import { appIdProblem } from '../../shared/keys/app-id';
import type { DocumentRateLimit } from '../../shared/keys/key-document';
import type { EditRequest, ExpirySpec } from './changes';
import { INVALID_KEY_ID_MESSAGE, isKeyId } from '../../shared/keys/key-material';
import { parseCidr } from '../../shared/keys/network';
import { readRateLimit } from '../../shared/keys/rate-limit';
import { parseTimestamp, TIMESTAMP_RULE } from '../../shared/keys/timestamp';
import { closeMatch } from '../../shared/nearest';
import { DURATION_RULE, parseDuration } from './duration';

/**
 * The file `apply` reads: many changes to the key registry at once (docs/keys.md, "Many changes at once").
 *
 *   {"format": "payment-api-key-changes/1",
 *    "changes": [
 *      {"op": "add", "app": "partner-0001", "expiresIn": "365d", "allowedCidrs": ["203.0.113.0/24"],
 *       "rateLimit": {"perSecond": 20, "burst": 40}},
 *      {"op": "rotate", "app": "partner-0002", "grace": "7d"},
 *      {"op": "revoke", "app": "partner-0003", "keyId": "0a1b2c3d4e5f"},
 *      {"op": "remove", "app": "partner-0004"}]}
 *
 * Strict, as the secret's own format: plain JSON (no comments, no trailing commas), no unknown or repeated field,
 * each app named by one change at most. Every problem is found, each located by line and column, and a problem
 * never quotes the file: only an app id that passed its checks is named (a key pasted anywhere stays unrepeated).
 * Pure: the clock comes in as `now`, for `expires` that must be in the future.
 */

export const CHANGE_FILE_FORMAT = 'payment-api-key-changes/1';

interface Located {
  /** 1-based, where the change's object starts. */
  readonly line: number;
  /** 1-based position among the changes. */
  readonly number: number;
  readonly appId: string;
}

/** A change of the file: one of the edits a command makes (changes.ts), with where the file gives it. */
export type ChangeRequest = Located &
  Extract<EditRequest, { readonly op: 'add' | 'rotate' | 'revoke' | 'remove' }>;

export type ChangeOp = ChangeRequest['op'];

export interface ChangeFileProblem {
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

export type ChangeFileReading =
  | { readonly ok: true; readonly changes: readonly ChangeRequest[] }
  | { readonly ok: false; readonly problems: readonly ChangeFileProblem[] };

const TOP_FIELDS = ['format', 'changes'] as const;

const OP_FIELDS: Readonly<Record<ChangeOp, readonly string[]>> = {
  add: ['op', 'app', 'plain', 'hash', 'expiresIn', 'expires', 'allowedCidrs', 'rateLimit'],
  rotate: ['op', 'app', 'plain', 'hash', 'expiresIn', 'expires', 'grace'],
  revoke: ['op', 'app', 'keyId', 'force'],
  remove: ['op', 'app'],
};

const OPS = Object.keys(OP_FIELDS) as ChangeOp[];

function isOp(value: unknown): value is ChangeOp {
  return typeof value === 'string' && Object.hasOwn(OP_FIELDS, value);
}

const quotedList = (names: readonly string[]): string => names.map((name) => `"${name}"`).join(', ');

/** `ColonExpected` → `colon expected`. */
function syntaxWords(error: ParseError): string {
  return printParseErrorCode(error.error)
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
}

class Problems {
  readonly list: ChangeFileProblem[] = [];

  constructor(private readonly lineStarts: readonly number[]) {}

  static of(text: string): Problems {
    const lineStarts = [0];
    for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1))
      lineStarts.push(index + 1);
    return new Problems(lineStarts);
  }

  /** A list of its own, located in the same text. */
  fork(): Problems {
    return new Problems(this.lineStarts);
  }

  /** 1-based line and column of a character offset. */
  position(offset: number): { readonly line: number; readonly column: number } {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if ((this.lineStarts[middle] ?? 0) <= offset) low = middle;
      else high = middle - 1;
    }
    return { line: low + 1, column: offset - (this.lineStarts[low] ?? 0) + 1 };
  }

  add(offset: number, message: string): void {
    this.list.push({ ...this.position(offset), message });
  }
}

/** The members of an object node, each name once; a repeated name is a problem (JSON.parse would keep the last). */
function members(node: Node, problems: Problems, what: string): Map<string, Node> | undefined {
  if (node.type !== 'object') {
    problems.add(node.offset, `${what} must be a JSON object`);
    return undefined;
  }
  const found = new Map<string, Node>();
  for (const [index, property] of (node.children ?? []).entries()) {
    const [nameNode, valueNode] = property.children ?? [];
    if (nameNode === undefined || valueNode === undefined) continue;
    const name = String(nameNode.value);
    if (found.has(name)) {
      problems.add(nameNode.offset, `field #${index + 1} of ${what} repeats a field named before it`);
      continue;
    }
    found.set(name, valueNode);
  }
  return found;
}

function unknownFields(
  fields: ReadonlyMap<string, Node>,
  allowed: readonly string[],
  problems: Problems,
  what: string,
  /** Fields refused with a message of their own. */
  refusedElsewhere: readonly string[] = [],
): void {
  [...fields].forEach(([name, node], index) => {
    if (!allowed.includes(name) && !refusedElsewhere.includes(name)) {
      // The name is not repeated: it may be anything, a pasted key included. Only a known name is suggested.
      const meant = closeMatch(name, allowed);
      problems.add(
        node.parent?.offset ?? node.offset,
        `field #${index + 1} of ${what} is not one of ${quotedList(allowed)}` +
          (meant === undefined ? '' : `: did you mean "${meant}"?`),
      );
    }
  });
}

/** What a field's check is told: the change it is in (`change #3`) and the clock, for `expires`. */
interface FieldContext {
  readonly what: string;
  readonly now: number;
}

/** A field's value as the change keeps it; or its problems, each at its own node. */
type FieldReading = ChangeFields | { readonly problems: readonly [Node, string][] };

/** The values of a change's fields, each once read (`expiresIn` and `expires` both give `expiry`). */
interface ChangeFields {
  readonly expiry?: ExpirySpec;
  readonly allowedCidrs?: string[];
  readonly rateLimit?: DocumentRateLimit;
  readonly graceMs?: number;
  readonly plain?: boolean;
  readonly keyId?: string;
  readonly force?: boolean;
}

const refused = (node: Node, message: string): FieldReading => ({ problems: [[node, message]] });

const booleanField =
  (field: 'plain' | 'force') =>
  (node: Node, { what }: FieldContext): FieldReading =>
    node.type === 'boolean'
      ? { [field]: node.value === true }
      : refused(node, `"${field}" of ${what} must be true or false`);

const durationField =
  (field: 'expiresIn' | 'grace') =>
  (node: Node, { what }: FieldContext): FieldReading => {
    const ms = node.type === 'string' ? parseDuration(String(node.value)) : undefined;
    if (ms === undefined) return refused(node, `"${field}" of ${what} must be ${DURATION_RULE}`);
    if (field === 'grace') return { graceMs: ms };
    return ms === 0
      ? refused(
          node,
          `"expiresIn" of ${what} must be longer than 0s: a new key that has already expired is of no use`,
        )
      : { expiry: { kind: 'in', ms } };
  };

function expiresField(node: Node, { what, now }: FieldContext): FieldReading {
  const at = node.type === 'string' ? parseTimestamp(String(node.value)) : undefined;
  if (at === undefined) return refused(node, `"expires" of ${what} must be ${TIMESTAMP_RULE}`);
  return at <= now
    ? refused(node, `"expires" of ${what} has passed: a new key that has already expired is of no use`)
    : { expiry: { kind: 'at', at } };
}

function cidrsField(node: Node, { what }: FieldContext): FieldReading {
  if (node.type !== 'array') return refused(node, `"allowedCidrs" of ${what} must be a list of CIDR blocks`);
  const items = node.children ?? [];
  if (items.length === 0) {
    return refused(
      node,
      `"allowedCidrs" of ${what} is empty, which allows no network: leave it out for any network, or give blocks`,
    );
  }
  const problems = items.flatMap((item, index): [Node, string][] => {
    const reading = item.type === 'string' ? parseCidr(String(item.value)) : undefined;
    if (reading?.ok === true) return [];
    const why = reading === undefined ? 'not a string' : reading.reason;
    return [[item, `"allowedCidrs" #${index + 1} of ${what}: ${why}`]];
  });
  return problems.length > 0 ? { problems } : { allowedCidrs: items.map((item) => String(item.value)) };
}

function rateLimitField(node: Node, { what }: FieldContext): FieldReading {
  const reading = readRateLimit(getNodeValue(node));
  return reading.ok ? { rateLimit: reading.written } : refused(node, `${reading.reason} (${what})`);
}

function keyIdField(node: Node, { what }: FieldContext): FieldReading {
  const keyId = node.type === 'string' ? String(node.value) : '';
  return isKeyId(keyId) ? { keyId } : refused(node, `${what}: ${INVALID_KEY_ID_MESSAGE} ("keyId")`);
}

/**
 * `"hash": true` is the default (it once chose `sha256:`); `"hash": false` once meant plain text and is refused
 * rather than quietly read either way.
 */
function hashField(node: Node, { what }: FieldContext): FieldReading {
  if (node.type !== 'boolean') return refused(node, `"hash" of ${what} must be true or false`);
  return node.value === true
    ? {}
    : refused(
        node,
        `"hash": false of ${what} no longer means plain text: new keys are stored as digests; give "plain": true to store the key itself, on purpose`,
      );
}

/** How each field a change may give is checked, in the order its problems are reported. */
const FIELD_CHECKS: Readonly<Record<string, (node: Node, context: FieldContext) => FieldReading>> = {
  keyId: keyIdField,
  expiresIn: durationField('expiresIn'),
  expires: expiresField,
  allowedCidrs: cidrsField,
  rateLimit: rateLimitField,
  grace: durationField('grace'),
  plain: booleanField('plain'),
  hash: hashField,
  force: booleanField('force'),
};

/** The checks of each op's fields, in FIELD_CHECKS' order: made once, not for each of 100,000 changes. */
const OP_CHECKS = new Map(
  OPS.map((op) => [op, Object.entries(FIELD_CHECKS).filter(([field]) => OP_FIELDS[op].includes(field))]),
);

/**
 * Every field of a change checked, in one pass over FIELD_CHECKS. Refused as a whole: `expiresIn` with `expires`,
 * and `plain` with `hash`.
 */
function readFields(
  fields: ReadonlyMap<string, Node>,
  op: ChangeOp,
  context: FieldContext,
  problems: Problems,
): ChangeFields {
  const expiresNode = fields.get('expires');
  const bothExpiries = fields.has('expiresIn') && expiresNode !== undefined;
  if (bothExpiries)
    problems.add(expiresNode.offset, `${context.what} gives both "expiresIn" and "expires": give one`);
  const values: ChangeFields = {};
  for (const [field, check] of OP_CHECKS.get(op) ?? []) {
    const node = fields.get(field);
    if (node === undefined) continue;
    if (bothExpiries && (field === 'expiresIn' || field === 'expires')) continue;
    const reading = check(node, context);
    if ('problems' in reading) for (const [at, message] of reading.problems) problems.add(at.offset, message);
    else Object.assign(values, reading);
  }
  const hashNode = fields.get('hash');
  if (values.plain === true && hashNode?.value === true) {
    problems.add(hashNode.offset, `${context.what} gives both "plain" and "hash": give one`);
  }
  return values;
}

/**
 * A `key` field: a key written into the file. Refused rather than stored as its digest: apply makes every new key
 * itself (from the CSPRNG, shown once), and a key that has sat in a file, perhaps in version control, is one to end,
 * not to install. The value is never repeated.
 */
function refuseGivenKey(fields: ReadonlyMap<string, Node>, problems: Problems, what: string): void {
  const node = fields.get('key');
  if (node === undefined) return;
  problems.add(
    node.offset,
    `${what} gives a "key": apply makes each new key itself and stores only its digest; a key written in a file is ` +
      'not taken (delete it from the file, and treat it as leaked if it was ever used)',
  );
}

/** A change's own fields, without where it is. */
type OpFields = ChangeRequest extends infer Request
  ? Request extends unknown
    ? Omit<Request, keyof Located>
    : never
  : never;

/**
 * What a change's fields mean for its op; a new key is stored as its digest unless `"plain": true`. `values` holds
 * only the op's own fields (OP_CHECKS reads no other).
 */
function opFields(op: ChangeOp, values: ChangeFields): OpFields {
  const { plain, keyId = '', force = false, ...rest } = values;
  switch (op) {
    case 'add':
    case 'rotate':
      return { op, storage: plain === true ? 'plain' : 'digest', ...rest };
    case 'revoke':
      return { op, keyId, force };
    case 'remove':
      return { op };
  }
}

/** The app id of a change; never echoed when refused (an operator may have pasted a key where it belongs). */
function appIdOf(fields: ReadonlyMap<string, Node>, node: Node, problems: Problems, what: string): string {
  const appNode = fields.get('app');
  if (appNode?.type !== 'string') {
    problems.add(appNode?.offset ?? node.offset, `${what} needs "app", the app id as a string`);
    return '';
  }
  const problem = appIdProblem(String(appNode.value));
  if (problem === undefined) return String(appNode.value);
  problems.add(appNode.offset, `invalid app id in ${what}: ${problem}`);
  return '';
}

function readChange(node: Node, number: number, problems: Problems, now: number): ChangeRequest | undefined {
  const what = `change #${number}`;
  const before = problems.list.length;
  const fields = members(node, problems, what);
  if (fields === undefined) return undefined;
  const opNode = fields.get('op');
  const op: unknown = opNode?.value;
  if (opNode === undefined || !isOp(op)) {
    problems.add(opNode?.offset ?? node.offset, `${what} needs "op": one of ${quotedList(OPS)}`);
    return undefined;
  }
  refuseGivenKey(fields, problems, what);
  unknownFields(fields, OP_FIELDS[op], problems, `${what} (${op})`, ['key']);
  const line = problems.position(node.offset).line;
  const appId = appIdOf(fields, node, problems, what);
  if (op === 'revoke' && !fields.has('keyId')) {
    problems.add(node.offset, `${what}: ${INVALID_KEY_ID_MESSAGE} ("keyId")`);
  }
  const values = readFields(fields, op, { what, now }, problems);
  // Fields first, then the op's: an object spread first costs 100,000 changes 23 MB more.
  const change: ChangeRequest = { line, number, appId, ...opFields(op, values) };
  return problems.list.length === before ? change : undefined;
}

/** A node while it is built: jsonc-parser's Node, not yet read-only. */
interface OpenNode {
  type: NodeType;
  offset: number;
  length: number;
  parent?: OpenNode;
  children?: OpenNode[];
  value?: unknown;
  colonOffset?: number;
}

/**
 * jsonc-parser's parseTree, except that each item of the file's "changes" list (the root's first field of that name)
 * goes to `onItem` as soon as it is whole, and is then dropped: 100,000 changes never make one tree (which took
 * 200 MB). Returns the root, with that list's node and how many items it had.
 */
function streamTree(
  text: string,
  errors: ParseError[],
  onItem: (item: Node, number: number) => void,
): { readonly root: Node | undefined; readonly list: Node | undefined; readonly items: number } {
  const top: OpenNode = { type: 'array', offset: -1, length: -1, children: [] };
  let current = top;
  let changesField: OpenNode | undefined;
  let list: OpenNode | undefined;
  let items = 0;
  const open = (node: OpenNode): OpenNode => {
    current.children?.push(node);
    return node;
  };
  const whole = (node: OpenNode) => {
    if (node.parent === undefined || node.parent !== list) return;
    list.children?.pop();
    onItem(node, ++items);
  };
  const endField = (end: number) => {
    if (current.type !== 'property') return;
    current.length = end - current.offset;
    current = current.parent ?? top;
  };
  const close = (offset: number, length: number) => {
    endField(offset + length);
    const closed = current;
    closed.length = offset + length - closed.offset;
    current = closed.parent ?? top;
    endField(offset + length);
    whole(closed);
  };
  visit(
    text,
    {
      onObjectBegin: (offset) => {
        current = open({ type: 'object', offset, length: -1, parent: current, children: [] });
      },
      onObjectProperty: (name, offset, length) => {
        const atRoot = current.parent === top;
        current = open({ type: 'property', offset, length: -1, parent: current, children: [] });
        current.children?.push({ type: 'string', value: name, offset, length, parent: current });
        if (atRoot && name === 'changes') changesField ??= current;
      },
      onObjectEnd: close,
      onArrayBegin: (offset) => {
        const array = open({ type: 'array', offset, length: -1, parent: current, children: [] });
        if (current === changesField) list ??= array;
        current = array;
      },
      onArrayEnd: close,
      onLiteralValue: (value: unknown, offset, length) => {
        const type = value === null ? 'null' : (typeof value as 'string' | 'number' | 'boolean');
        const node = open({ type, offset, length, parent: current, value });
        endField(offset + length);
        whole(node);
      },
      onSeparator: (separator, offset) => {
        if (current.type !== 'property') return;
        if (separator === ':') current.colonOffset = offset;
        else if (separator === ',') endField(offset);
      },
      onError: (error, offset, length) => errors.push({ error, offset, length }),
    },
    { allowTrailingComma: false, disallowComments: true },
  );
  const root = top.children?.[0];
  if (root !== undefined) delete root.parent;
  return { root, list, items };
}

/** Each change as its item is read; an app named by two changes is a problem of the second. */
class ChangesReader {
  readonly changes: ChangeRequest[] = [];
  private readonly firstChangeOf = new Map<string, { readonly number: number; readonly line: number }>();

  constructor(
    readonly problems: Problems,
    private readonly now: number,
  ) {}

  read(item: Node, number: number): void {
    const change = readChange(item, number, this.problems, this.now);
    if (change === undefined) return;
    const earlier = this.firstChangeOf.get(change.appId);
    if (earlier !== undefined) {
      this.problems.add(
        item.offset,
        `change #${change.number} names app ${change.appId}, as change #${earlier.number} (line ${earlier.line}) ` +
          'does: give each app one change',
      );
      return;
    }
    this.firstChangeOf.set(change.appId, { number: change.number, line: change.line });
    this.changes.push(change);
  }
}

/** No change needs more than 4 levels; thousands would overflow the stack of a parser that recurses. */
export const MAX_NESTING = 16;

/** Where the text first nests deeper than MAX_NESTING (objects and lists, outside strings), if it does. */
function tooDeepAt(text: string): number | undefined {
  let depth = 0;
  let inString = false;
  for (let offset = 0; offset < text.length; offset++) {
    const char = text[offset];
    if (inString) {
      if (char === '\\') offset++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') {
      if (++depth > MAX_NESTING) return offset;
    } else if (char === '}' || char === ']') depth--;
  }
  return undefined;
}

/** Reads an apply file; every problem is reported (the file's own, then its changes'), none quotes the file. */
export function parseChangeFile(text: string, now: number): ChangeFileReading {
  const problems = Problems.of(text);
  const deep = tooDeepAt(text);
  if (deep !== undefined) {
    problems.add(
      deep,
      `nested deeper than ${MAX_NESTING} levels, which no change needs; nothing else was read`,
    );
    return { ok: false, problems: problems.list };
  }
  const reader = new ChangesReader(problems.fork(), now);
  const syntax: ParseError[] = [];
  const { root, list, items } = streamTree(text, syntax, (item, number) => {
    reader.read(item, number);
  });
  for (const error of syntax) problems.add(error.offset, `not valid JSON: ${syntaxWords(error)}`);
  if (root === undefined || syntax.length > 0) {
    if (problems.list.length === 0) problems.add(0, 'not valid JSON');
    return { ok: false, problems: problems.list };
  }
  const top = members(root, problems, 'the file');
  if (top === undefined) return { ok: false, problems: problems.list };
  unknownFields(top, TOP_FIELDS, problems, 'the file');
  const format = top.get('format');
  if (format !== undefined && format.value !== CHANGE_FILE_FORMAT) {
    problems.add(format.offset, `"format" must be "${CHANGE_FILE_FORMAT}"`);
  }
  if (list === undefined || top.get('changes') !== list) {
    problems.add(top.get('changes')?.offset ?? root.offset, 'the file needs "changes", a list of changes');
    return { ok: false, problems: problems.list };
  }
  if (items === 0) problems.add(list.offset, '"changes" is empty: nothing to apply');
  const all = problems.list.concat(reader.problems.list);
  return all.length === 0 ? { ok: true, changes: reader.changes } : { ok: false, problems: all };
}
