/** A container image reference split the way the container runtime reads it. */
export interface ImageReference {
  /** Registry and path, with Docker Hub's implicit parts spelled out (docker.io/library/…). */
  readonly repository: string;
  readonly tag: string | undefined;
  readonly digest: string | undefined;
}

/**
 * `mysql`, `docker.io/mysql` and `docker.io/library/mysql` name one repository; comparing the
 * spelled-out form keeps a short spelling from slipping past a pattern written in the long one.
 */
function canonicalRepository(name: string): string {
  const [first, ...rest] = name.split('/');
  const hasRegistry = rest.length > 0 && (/[.:]/.test(first!) || first === 'localhost');
  const registry = hasRegistry ? first! : 'docker.io';
  const path = hasRegistry ? rest : [first!, ...rest];
  if (registry === 'docker.io' && path.length === 1) path.unshift('library');
  return [registry, ...path].join('/');
}

export function parseImage(reference: string): ImageReference {
  const at = reference.indexOf('@');
  const name = at < 0 ? reference : reference.slice(0, at);
  const colon = name.lastIndexOf(':');
  const hasTag = colon > name.lastIndexOf('/');
  return {
    repository: canonicalRepository(hasTag ? name.slice(0, colon) : name),
    tag: hasTag ? name.slice(colon + 1) : undefined,
    digest: at < 0 ? undefined : reference.slice(at + 1),
  };
}

function repositoryMatches(pattern: string, repository: string): boolean {
  if (!pattern.endsWith('/*')) return pattern === repository;
  return repository.startsWith(pattern.slice(0, -1));
}

/**
 * Whether `pattern` admits `image`. A pattern names a repository (`registry.example.com/backup`),
 * or every repository below a path (`registry.example.com/backup/*`), and optionally pins a tag
 * (`…:1.2`) or a digest (`…@sha256:…`). A pinned tag admits only references without a digest,
 * since the runtime pulls by the digest and the tag then means nothing.
 */
export function imageMatches(image: string, pattern: string): boolean {
  const want = parseImage(pattern);
  const have = parseImage(image);
  if (!repositoryMatches(want.repository, have.repository)) return false;
  if (want.digest !== undefined) return have.digest === want.digest;
  if (want.tag !== undefined) return have.tag === want.tag && have.digest === undefined;
  return true;
}

/** The operator's own default image is always allowed; the list adds more. */
export function imageAllowed(
  image: string,
  defaultImage: string,
  patterns: readonly string[],
): boolean {
  return image === defaultImage || patterns.some((p) => imageMatches(image, p));
}
