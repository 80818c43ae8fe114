/**
 * Reading untrusted values defensively: a notebook's trace and the server's answers may hold any field
 * of any type, and these never throw.
 */

/** `value` as a plain object, or null. */
export function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** `value` as a list (an empty one when it is not). */
export function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** `value` as a finite number, or null. */
export function asNumber(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** JSON text of `value`, never throwing (cycles and BigInts come out as a note). */
export function toJson(value: unknown, indent?: number): string {
  try {
    const text = JSON.stringify(value, null, indent);
    return text === undefined ? String(value) : text;
  } catch {
    return '(not JSON)';
  }
}
