import type { APIGatewayProxyResult } from 'aws-lambda';
import {
  KeyDocumentError,
  parseKeyDocument,
  serializeKeyDocument,
  type KeyDocument,
} from '../../shared/keys/key-document';
import { matchDigestOf } from '../../shared/keys/key-material';
import { expireKeysByDigest, findKeysByDigest, removeKeysByDigest } from '../../shared/keys/leaked-key';
import { secretSize } from '../../shared/keys/secret-size';
import { COMMON_HEADERS } from '../../shared/api/responses';
import { describeError, type LogFields, type Logger } from '../../shared/logger';
import { readProxyRequest } from '../payment/proxy-request';
import type { LeakAction, LeakedKey, LeakNotifier } from './leak-notice';
import type { KeyLookup } from './public-keys';
import { isCandidate, labelTokens, readReport, type ReportedToken } from './report';
import {
  MAX_WRITE_ATTEMPTS,
  REPORT_LIMITS,
  SCANNING_CONCURRENT_CALLS,
  type ScanningAction,
} from './settings';
import type { ShardStore } from './shard-store';
import { isValidSignature, readSignatureHeaders, SIGNATURE_HEADERS } from './signature';

export interface ScanningDependencies {
  readonly publicKeys: { lookup(keyIdentifier: string): Promise<KeyLookup> };
  readonly shards: ShardStore;
  readonly logger: Logger;
  readonly action: ScanningAction;
  /** The stack's key prefix: only tokens of this stack's format are looked up. */
  readonly keyPrefix: string;
  /** Where a notice of each report's leaked keys goes; absent: the log lines alone record them. */
  readonly notify?: LeakNotifier;
  /** Epoch ms: the instant a revoked key expires at. */
  readonly now?: () => number;
}

export type ScanningHandler = (event: unknown) => Promise<APIGatewayProxyResult>;

/** Fixed bodies in the API's JSON shape; messages name no value of the request. */
const ERRORS = {
  badRequest: [400, 'bad_request', 'The body is not a secret scanning report.'],
  unauthorized: [401, 'unauthorized', 'Missing or invalid GitHub signature.'],
  payloadTooLarge: [413, 'payload_too_large', 'The request body is too large.'],
  unavailable: [503, 'unavailable', 'The report cannot be handled right now. Retry later.'],
  internalError: [500, 'internal_error', 'An internal error occurred.'],
} as const;

function answer(statusCode: number, body: string, requestId: string | undefined): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { ...COMMON_HEADERS, ...(requestId === undefined ? {} : { 'X-Request-Id': requestId }) },
    body,
  };
}

function errorAnswer(name: keyof typeof ERRORS, requestId: string | undefined): APIGatewayProxyResult {
  const [status, code, message] = ERRORS[name];
  return answer(status, JSON.stringify({ code, message }), requestId);
}

type BodyBytes =
  { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly problem: string };

/** The body exactly as sent, judged by its length before anything is decoded: the signature covers these bytes. */
function bodyBytes(body: ReturnType<typeof readProxyRequest>['body']): BodyBytes {
  if (body.kind === 'none') return { ok: true, bytes: Buffer.alloc(0) };
  if (body.kind === 'notText') return { ok: false, problem: 'not_text' };
  const max = REPORT_LIMITS.maxBodyBytes;
  if (body.isBase64Encoded) {
    if (body.text.length > Math.ceil(max / 3) * 4) return { ok: false, problem: 'body_too_large' };
    const bytes = Buffer.from(body.text, 'base64');
    return bytes.length > max ? { ok: false, problem: 'body_too_large' } : { ok: true, bytes };
  }
  if (body.text.length > max || Buffer.byteLength(body.text, 'utf8') > max) {
    return { ok: false, problem: 'body_too_large' };
  }
  return { ok: true, bytes: Buffer.from(body.text, 'utf8') };
}

/** Runs `work` on every item, at most `limit` at once, results in order. */
async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  });
  await Promise.all(lanes);
  return results;
}

/** A shard's document as read, or why it cannot be searched (unreadable, or malformed for a safe rewrite). */
type ShardDocument =
  | { readonly shard: number; readonly ok: true; readonly document: KeyDocument; readonly versionId: string }
  | { readonly shard: number; readonly ok: false; readonly problem: string };

function parseShard(shard: number, text: string, versionId: string): ShardDocument {
  try {
    return { shard, ok: true, document: parseKeyDocument(text), versionId };
  } catch (error) {
    if (error instanceof KeyDocumentError) return { shard, ok: false, problem: error.message };
    throw error;
  }
}

/** One candidate token of the report: a well-formed key of this stack, by its match digest. */
interface Candidate {
  readonly token: string;
  readonly digest: Buffer;
  /** Every report entry that carried it (GitHub may list one token at several places). */
  readonly reports: readonly ReportedToken[];
}

/** Where a candidate was found, per shard. */
interface Finding {
  readonly candidate: Candidate;
  readonly shard: number;
}

/**
 * POST /secret-scanning: GitHub's secret scanning partner program reports tokens of ours found in public. In order:
 * the body's size (413, before anything else), the signature headers (401), the public key they name (401 if
 * unknown, 503 if GitHub's keys cannot be fetched), the signature over the raw body (401), the report (400). Only
 * then is anything read: each token of this stack's format is looked for in every shard by digest; each one found is
 * a true positive, ended (revoke: it expires now, one compare-and-swap write per shard touched) or only reported,
 * logged as `key_leaked` and sent to the alarm topic, never the key. Answers GitHub's format, each token labelled
 * with the type it came with; 503 when some token could not be judged (a shard unreadable) or revoked, so GitHub
 * retries: a repeat finds the keys already ended and writes nothing.
 */
export function createScanningHandler(deps: ScanningDependencies): ScanningHandler {
  const { publicKeys, shards, logger, action, keyPrefix, notify } = deps;
  const now = deps.now ?? Date.now;

  return async (event) => {
    const request = readProxyRequest(event);
    const requestId = request.requestId;
    const context: LogFields = { apiRequestId: requestId, sourceIp: request.sourceIp };
    const refuse = (
      name: keyof typeof ERRORS,
      reason: string,
      fields: LogFields = {},
    ): APIGatewayProxyResult => {
      const response = errorAnswer(name, requestId);
      logger.info('report refused', { ...context, status: response.statusCode, reason, ...fields });
      return response;
    };

    try {
      const body = bodyBytes(request.body);
      if (!body.ok)
        return refuse(body.problem === 'body_too_large' ? 'payloadTooLarge' : 'badRequest', body.problem);

      const signature = readSignatureHeaders(
        request.headers.all(SIGNATURE_HEADERS.keyIdentifier),
        request.headers.all(SIGNATURE_HEADERS.signature),
      );
      if (!signature.ok) return refuse('unauthorized', signature.reason);
      const lookup = await publicKeys.lookup(signature.keyIdentifier);
      if (lookup.kind === 'unknown') return refuse('unauthorized', 'unknown_key_identifier');
      if (lookup.kind === 'unavailable') {
        logger.error('report refused', {
          ...context,
          status: 503,
          reason: 'public_keys_unavailable',
          error: lookup.problem,
        });
        return errorAnswer('unavailable', requestId);
      }
      if (!isValidSignature(body.bytes, signature.signature, lookup.key))
        return refuse('unauthorized', 'bad_signature');

      let parsed: unknown;
      try {
        parsed = JSON.parse(body.bytes.toString('utf8'));
      } catch {
        return refuse('badRequest', 'not_json');
      }
      const report = readReport(parsed);
      if (!report.ok) return refuse('badRequest', 'not_a_report', { error: report.problem });

      const outcome = await judge(report.tokens);
      const labels = labelTokens(report.tokens, (token) => outcome.truePositives.has(token));
      const fields: LogFields = {
        ...context,
        tokens: report.tokens.length,
        candidates: outcome.candidates,
        truePositives: outcome.truePositives.size,
        unreadableShards: outcome.unreadableShards,
      };
      if (outcome.retry) {
        logger.error('report not fully handled', {
          ...fields,
          status: 503,
          undetermined: outcome.undetermined,
          failedWrites: outcome.failedWrites,
        });
        return errorAnswer('unavailable', requestId);
      }
      logger.info('report judged', { ...fields, status: 200 });
      return answer(200, JSON.stringify(labels), requestId);
    } catch (error) {
      logger.error('unexpected error', { ...context, status: 500, error: describeError(error) });
      return errorAnswer('internalError', requestId);
    }
  };

  async function judge(tokens: readonly ReportedToken[]): Promise<{
    readonly truePositives: ReadonlySet<string>;
    readonly candidates: number;
    readonly unreadableShards: number;
    readonly undetermined: number;
    readonly failedWrites: number;
    readonly retry: boolean;
  }> {
    const byToken = new Map<string, ReportedToken[]>();
    for (const reported of tokens) {
      if (!isCandidate(reported.token, keyPrefix)) continue;
      byToken.set(reported.token, [...(byToken.get(reported.token) ?? []), reported]);
    }
    const candidates: Candidate[] = [...byToken].map(([token, reports]) => ({
      token,
      digest: matchDigestOf(token),
      reports,
    }));
    // A report of nothing that can be ours reads nothing.
    if (candidates.length === 0) {
      return {
        truePositives: new Set(),
        candidates: 0,
        unreadableShards: 0,
        undetermined: 0,
        failedWrites: 0,
        retry: false,
      };
    }

    const documents = (await shards.readAll()).map((read) =>
      read.ok ? parseShard(read.shard, read.snapshot.text, read.snapshot.versionId) : read,
    );
    const unreadable = documents.filter((shard): shard is Extract<ShardDocument, { ok: false }> => !shard.ok);
    for (const shard of unreadable) {
      logger.error('shard unreadable', { shard: shard.shard, error: shard.problem });
    }

    const findings: Finding[] = [];
    for (const candidate of candidates) {
      for (const shard of documents) {
        if (shard.ok && findKeysByDigest(shard.document, candidate.digest).length > 0) {
          findings.push({ candidate, shard: shard.shard });
        }
      }
    }
    const truePositives = new Set(findings.map((finding) => finding.candidate.token));
    // Not found, but a shard could not be searched: the token may be ours, so it is judged on GitHub's retry.
    const undetermined =
      unreadable.length === 0 ? 0 : candidates.filter((c) => !truePositives.has(c.token)).length;

    const leaks: LeakedKey[] = [];
    const touched = [...new Set(findings.map((finding) => finding.shard))];
    await mapLimited(touched, SCANNING_CONCURRENT_CALLS, async (shard) => {
      const here = findings.filter((finding) => finding.shard === shard).map((finding) => finding.candidate);
      const start = documents.find((document) => document.shard === shard);
      if (start === undefined || !start.ok) return;
      leaks.push(...(await endInShard(shard, start.document, start.versionId, here)));
    });

    for (const leak of leaks) {
      const fields: LogFields = {
        appId: leak.appId,
        keyId: leak.keyId,
        shard: leak.shard,
        action: leak.action,
        leakUrl: leak.url,
        leakSource: leak.source,
        tokenType: leak.tokenType,
      };
      // A key that still works after its leak is an error for on-call; an ended one a warning.
      if (leak.action === 'revoke_failed') logger.error('key_leaked', fields);
      else logger.warn('key_leaked', fields);
    }
    if (leaks.length > 0 && notify !== undefined) {
      try {
        await notify(leaks);
      } catch (error) {
        logger.error('leak notice not sent', { leakedKeys: leaks.length, error: describeError(error) });
      }
    }
    const failedWrites = leaks.filter((leak) => leak.action === 'revoke_failed').length;
    return {
      truePositives,
      candidates: candidates.length,
      unreadableShards: unreadable.length,
      undetermined,
      failedWrites,
      retry: undetermined > 0 || failedWrites > 0,
    };
  }

  /** The leaked keys of one shard, each entry described as what was done about it. */
  function describe(
    document: KeyDocument,
    shard: number,
    candidates: readonly Candidate[],
    actionOf: (candidate: Candidate) => LeakAction,
  ): LeakedKey[] {
    return candidates.flatMap((candidate) =>
      findKeysByDigest(document, candidate.digest).flatMap((location) =>
        candidate.reports.map((reported) => ({
          appId: location.appId,
          keyId: location.keyId,
          shard,
          action: actionOf(candidate),
          url: reported.url,
          source: reported.source,
          tokenType: reported.type,
        })),
      ),
    );
  }

  /**
   * Ends every candidate's entries in one shard with one compare-and-swap write; after a lost race, again from a
   * fresh read (MAX_WRITE_ATTEMPTS in all). A key already ended is not written again.
   */
  async function endInShard(
    shard: number,
    first: KeyDocument,
    firstVersion: string,
    candidates: readonly Candidate[],
  ): Promise<LeakedKey[]> {
    if (action === 'report') return describe(first, shard, candidates, () => 'reported');
    let document = first;
    let versionId = firstVersion;
    const at = now();
    for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
      const changedBy = new Set<Candidate>();
      let edited = document;
      for (const candidate of candidates) {
        const edit = expireKeysByDigest(edited, candidate.digest, at);
        edited = edit.document;
        if (edit.changed) changedBy.add(candidate);
      }
      if (changedBy.size === 0) return describe(document, shard, candidates, () => 'already_revoked');
      let text = serializeKeyDocument(edited);
      if (!secretSize(text).fits) {
        // An expiry takes a few bytes more; a shard too full for them gets the keys removed instead.
        let removed = document;
        for (const candidate of candidates) removed = removeKeysByDigest(removed, candidate.digest).document;
        text = serializeKeyDocument(removed);
      }
      try {
        const written = await shards.replace(shard, versionId, text);
        if (written === 'written') {
          return describe(document, shard, candidates, (candidate) =>
            changedBy.has(candidate) ? 'revoked' : 'already_revoked',
          );
        }
        const fresh = await shards.readOne(shard);
        const reread = parseShard(shard, fresh.text, fresh.versionId);
        if (!reread.ok) throw new Error(reread.problem);
        document = reread.document;
        versionId = reread.versionId;
      } catch (error) {
        logger.error('revocation not written', { shard, attempt, error: describeError(error) });
        return describe(document, shard, candidates, () => 'revoke_failed');
      }
    }
    logger.error('revocation not written', {
      shard,
      attempt: MAX_WRITE_ATTEMPTS,
      error: 'every attempt lost a race with another writer',
    });
    return describe(document, shard, candidates, () => 'revoke_failed');
  }
}
