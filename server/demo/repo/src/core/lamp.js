/** A street lamp: an id, where it stands, and how bright it burns (0–100). */
export function createLamp(id, street, brightness = 80) {
  if (brightness < 0 || brightness > 100) throw new RangeError('brightness must be 0..100');
  return { id, street, brightness, lit: false };
}

export function light(lamp) {
  return { ...lamp, lit: true };
}

export function extinguish(lamp) {
  return { ...lamp, lit: false };
}
