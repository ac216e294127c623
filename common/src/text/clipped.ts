/**
 * A text a message quotes from a request, whole when it has at most `max` characters, else its
 * start and its length (`aaaa… (5000 characters)`), so a cut never passes for what was sent.
 */
export function clipped(text: string, max = 64): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}
