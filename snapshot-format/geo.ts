// The near filter's geometry: a listing's point as a unit vector (stored by the compiler in the column store), a
// circle on the sphere, and the one test of a point against it that the column scan and the SQL function share.
import type { Near } from './listing-filters.ts';

/** The mean earth radius (IUGG), the sphere great-circle distances are measured on. */
export const EARTH_RADIUS_KM = 6371.0088;
const RAD = Math.PI / 180;

/** A point as a unit vector (x towards 0°N 0°E, z towards the north pole); NaN for a point without coordinates. */
export function unitVector(lat: number | null, lon: number | null): [x: number, y: number, z: number] {
  if (lat === null || lon === null) return [NaN, NaN, NaN];
  const phi = lat * RAD,
    lambda = lon * RAD;
  const c = Math.cos(phi);
  return [c * Math.cos(lambda), c * Math.sin(lambda), Math.sin(phi)];
}

/**
 * A circle: its centre as a unit vector, the cosine of its radius as an angle (a point is within exactly when its
 * vector's dot product with the centre's is at least that), and the band of z (the sine of the latitude) it spans,
 * which the column scan reads first. The band is widened by a nanometre's worth against rounding.
 */
export interface Circle {
  /** The bounding box in degrees, widened by a microdegree (every longitude near a pole or across ±180°). */
  latLo: number;
  latHi: number;
  lonLo: number;
  lonHi: number;
  x: number;
  y: number;
  z: number;
  cos: number;
  zLo: number;
  zHi: number;
}

export function circleOf(n: Near): Circle {
  const [x, y, z] = unitVector(n.lat, n.lon);
  const angle = n.km / EARTH_RADIUS_KM;
  const lo = n.lat * RAD - angle,
    hi = n.lat * RAD + angle;
  return {
    ...boxOf(n, angle),
    x,
    y,
    z,
    cos: Math.cos(angle),
    zLo: lo <= -Math.PI / 2 ? -1 : Math.sin(lo) - 1e-9,
    zHi: hi >= Math.PI / 2 ? 1 : Math.sin(hi) + 1e-9,
  };
}

/** The degrees a circle of `angle` radians around `n` spans, a microdegree more each way (~0.1 m). */
function boxOf(n: Near, angle: number): { latLo: number; latHi: number; lonLo: number; lonHi: number } {
  const dLat = angle / RAD + 1e-6;
  const cos = Math.cos(n.lat * RAD);
  const full = n.lat - dLat <= -90 || n.lat + dLat >= 90 || Math.sin(angle) >= cos;
  const dLon = full ? 360 : Math.asin(Math.sin(angle) / cos) / RAD + 1e-6;
  const wraps = n.lon - dLon < -180 || n.lon + dLon > 180;
  return {
    latLo: Math.max(-90, n.lat - dLat),
    latHi: Math.min(90, n.lat + dLat),
    lonLo: wraps ? -180 : n.lon - dLon,
    lonHi: wraps ? 180 : n.lon + dLon,
  };
}

/**
 * Whether the point (x, y, z) is within the circle: in its z band, and no farther than its radius along the
 * sphere (the angle between two unit vectors is at most r exactly when their dot product is at least cos r).
 * NaN (no coordinates) is never within. Every path (scan loop, row set, row test, SQL) decides with this test; the
 * hot loops write it out over local copies of the circle, the same operations in the same order.
 */
export function within(c: Circle, x: number, y: number, z: number): boolean {
  return z >= c.zLo && z <= c.zHi && x * c.x + y * c.y + z * c.z >= c.cos;
}

/**
 * The SQL function of the near condition, near_within(rid, lat, lon, km): 1 when the listing's point is within km
 * of (lat, lon). The server registers it (src/listings/planner.ts) over the column store's points, so that an index
 * plan decides exactly as the column scan does.
 */
export const NEAR_FUNCTION = 'near_within';
