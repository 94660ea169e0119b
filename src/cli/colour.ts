/**
 * Whether output may carry ANSI colour and bold: only to a terminal, and never when `NO_COLOR`
 * is set to anything but the empty string (https://no-color.org). The command line itself writes
 * no colour today; what does (the demo, scripts/demo.mjs) asks this first.
 */
export function useColour(o: { isTTY: boolean | undefined; env: Readonly<Record<string, string | undefined>> }): boolean {
  if (o.env.NO_COLOR !== undefined && o.env.NO_COLOR !== '') return false;
  return o.isTTY === true;
}

/** `text` in bold when `colour`, else as it is. */
export function bold(text: string, colour: boolean): string {
  return colour ? `\x1b[1m${text}\x1b[0m` : text;
}
