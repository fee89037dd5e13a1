/** How much of a value the tools echo back: enough to recognise it, never a pasted file. */
export const MAX_ECHOED_LENGTH = 200;

/** `text` cut to `maxLength` characters, marked with "…" when it was cut. */
export function shortened(text: string, maxLength: number = MAX_ECHOED_LENGTH): string {
  return text.length > maxLength ? `${text.slice(0, maxLength)}…` : text;
}

/** The first line of `text`, shortened: for messages from elsewhere (AWS, node) that may run on. */
export function firstLine(text: string, maxLength: number = MAX_ECHOED_LENGTH): string {
  return shortened(text.split('\n', 1)[0] ?? '', maxLength);
}
