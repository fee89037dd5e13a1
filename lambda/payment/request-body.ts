/** `application/json`, with any parameters (`; charset=utf-8`) and in any case. Missing or repeated: not JSON. */
export function isJsonContentType(values: readonly string[]): boolean {
  if (values.length !== 1) return false;
  const mediaType = (values[0] ?? '').split(';', 1)[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}

/** An absent or blank body is allowed (the contract's sample request has none); anything else must parse. */
export function isAcceptableJsonBody(body: string | null, isBase64Encoded: boolean): boolean {
  if (body === null) return true;
  const text = isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
  if (text.trim() === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
