/**
 * Semantic equality of what the operator wants against what the API server returns (the
 * counterpart of apimachinery's equality.Semantic): only keys present in `desired` are compared,
 * so fields the server defaults never count as a difference; Go's omitempty makes a desired
 * false, 0, "" or empty list equal to absence, while a key the operator leaves unset (present
 * with the value undefined) must be absent; resource quantities compare by value ("0.5" = "500m").
 */
export function semanticallyEqual(desired: unknown, actual: unknown, path = ''): boolean {
  // Unset means absent: an explicit 0 or false someone set (runAsUser: 0) is a difference.
  if (desired === undefined || desired === null) return actual === undefined || actual === null;
  if (isEmpty(desired)) return isEmpty(actual);
  if (Array.isArray(desired)) {
    return (
      Array.isArray(actual) &&
      actual.length === desired.length &&
      desired.every((item, i) => semanticallyEqual(item, actual[i], `${path}[${i}]`))
    );
  }
  if (typeof desired === 'object') {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
    const object = desired as Record<string, unknown>;
    const other = actual as Record<string, unknown>;
    return Object.keys(object).every((key) =>
      semanticallyEqual(object[key], other[key], `${path}.${key}`),
    );
  }
  if (typeof desired === 'string' && typeof actual === 'string' && isQuantityPath(path)) {
    return quantitiesEqual(desired, actual);
  }
  return desired === actual;
}

function isEmpty(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    value === false ||
    value === 0 ||
    value === '' ||
    (Array.isArray(value) && value.length === 0)
  );
}

function isQuantityPath(path: string): boolean {
  return /\.resources\.(requests|limits)\.[^.]+$/.test(path);
}

const SUFFIXES: Readonly<Record<string, number>> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** The value of a Kubernetes resource.Quantity, or undefined when it is not one. */
export function parseQuantity(quantity: string): number | undefined {
  const match = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|([a-zA-Z]*))$/.exec(quantity.trim());
  if (!match) return undefined;
  const [, number = '', exponent, suffix = ''] = match;
  if (exponent !== undefined) return Number(number + exponent);
  const scale = SUFFIXES[suffix];
  return scale === undefined ? undefined : Number(number) * scale;
}

function quantitiesEqual(a: string, b: string): boolean {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  if (x === undefined || y === undefined) return a === b;
  return Math.abs(x - y) <= Math.abs(x) * 1e-9;
}
