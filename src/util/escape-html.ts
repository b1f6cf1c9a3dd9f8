/** Escapes text for HTML element content and attribute values (every `& < > " '` as a numeric reference). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
