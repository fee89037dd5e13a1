/**
 * Text that API Gateway copies into its own responses: mapping templates, which it reads as VTL, and static
 * header values, which it reads as single-quoted literals. Text that would be interpreted rather than copied is
 * refused, so a catalogue edit cannot silently change a response.
 */

export function vtlLiteral(text: string): string {
  if (/[$#\\]/.test(text)) throw new Error(`Response text must not contain "$", "#" or "\\": ${text}`);
  return text;
}

function staticHeaderValue(value: string): string {
  if (value.includes("'")) throw new Error(`Header value must not contain a single quote: ${value}`);
  return `'${value}'`;
}

/** Headers as API Gateway's static values, as in the Lambda's responses. */
export function staticHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, staticHeaderValue(value)]));
}
