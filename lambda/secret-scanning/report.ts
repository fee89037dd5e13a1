import { keyShape } from '../../shared/keys/key-format';
import { REPORT_LIMITS } from './settings';

/**
 * GitHub's secret scanning alert, and the answer it expects. The request body is a JSON array of the tokens found:
 * `[{"token": "...", "type": "...", "url": "...", "source": "..."}]`; the answer labels each one:
 * `[{"token_raw": "...", "token_type": "...", "label": "true_positive" | "false_positive"}]`. Pure.
 */

export interface ReportedToken {
  readonly token: string;
  /** The type GitHub's pattern gave it; the answer carries it back as it came, whatever it says. */
  readonly type: string;
  /** Where it was found (a commit, an issue, a gist...). */
  readonly url: string;
  /** What GitHub scanned: `content`, `commit`, `npm`, ... */
  readonly source: string;
}

export type ReportReading =
  | { readonly ok: true; readonly tokens: readonly ReportedToken[] }
  | { readonly ok: false; readonly problem: string };

function boundedText(value: unknown, maxLength: number, required: boolean): string | undefined {
  if (value === undefined || value === null) return required ? undefined : '';
  return typeof value === 'string' && value.length <= maxLength ? value : undefined;
}

/**
 * The tokens of a parsed body. Strict on what is used (a token string, a type string, within their bounds) and on
 * the count; other fields GitHub may add are ignored. The problem never quotes the body.
 */
export function readReport(value: unknown): ReportReading {
  if (!Array.isArray(value)) return { ok: false, problem: 'the report is not a JSON array' };
  if (value.length > REPORT_LIMITS.maxTokens) {
    return { ok: false, problem: `the report lists more than ${REPORT_LIMITS.maxTokens} tokens` };
  }
  const tokens: ReportedToken[] = [];
  for (const [index, entry] of (value as unknown[]).entries()) {
    const fields =
      typeof entry === 'object' && entry !== null && !Array.isArray(entry)
        ? (entry as Record<string, unknown>)
        : undefined;
    const token = boundedText(fields?.token, REPORT_LIMITS.maxTokenLength, true);
    const type = boundedText(fields?.type, REPORT_LIMITS.maxTypeLength, true);
    const url = boundedText(fields?.url, REPORT_LIMITS.maxUrlLength, false);
    const source = boundedText(fields?.source, REPORT_LIMITS.maxSourceLength, false);
    if (
      token === undefined ||
      token === '' ||
      type === undefined ||
      url === undefined ||
      source === undefined
    ) {
      return { ok: false, problem: `the report's entry #${index + 1} is not a token with its type` };
    }
    tokens.push({ token, type, url, source });
  }
  return { ok: true, tokens };
}

/** Whether a token can be one of this stack's keys at all: its prefix, length, alphabet and checksum. */
export function isCandidate(token: string, keyPrefix: string): boolean {
  return keyShape(token, keyPrefix) === 'prefixed';
}

export type Label = 'true_positive' | 'false_positive';

export interface LabelledToken {
  readonly token_raw: string;
  readonly token_type: string;
  readonly label: Label;
}

/** The answer, one entry per reported token in the order reported, each with the type it came with. */
export function labelTokens(
  tokens: readonly ReportedToken[],
  isTruePositive: (token: string) => boolean,
): LabelledToken[] {
  return tokens.map(({ token, type }) => ({
    token_raw: token,
    token_type: type,
    label: isTruePositive(token) ? 'true_positive' : 'false_positive',
  }));
}
