/**
 * An argument list as it would be written in the call.
 */

import { clip } from '../common/format';
import { asObject, toJson } from '../common/values';

/**
 * `city="Oslo", unit="celsius"`: the arguments as written in the call, at most about `limit`
 * characters (long values are cut before they are turned into JSON, so a 1 MB argument costs little).
 */
export function argumentsSummary(args: unknown, limit = 160): string {
  const obj = asObject(args);
  if (!obj) {
    return args === undefined || args === null ? '' : clip(toJson(args), limit);
  }
  const parts: string[] = [];
  let length = 0;
  for (const key of Object.keys(obj)) {
    if (length > limit) {
      break;
    }
    const value = obj[key];
    const text =
      typeof value === 'string'
        ? toJson(value.slice(0, limit)) + (value.length > limit ? '…' : '')
        : clip(toJson(value), limit);
    const part = `${key}=${text}`;
    parts.push(part);
    length += part.length + 2;
  }
  return clip(parts.join(', '), limit);
}
