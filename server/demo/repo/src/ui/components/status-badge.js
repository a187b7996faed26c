/** A small text badge for the status page: "● lit" or "○ dark". */
export function statusBadge(lamp) {
  return lamp.lit ? `● ${lamp.id} lit` : `○ ${lamp.id} dark`;
}
