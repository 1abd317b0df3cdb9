import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import ts from 'typescript';
import type { Layering } from './layers.js';

// Paths here are relative to the repository root, with `/` between folders.

const TOP_FOLDERS = ['apps', 'libs', 'tools', 'bench', 'test'];
const OUTER = new Set(['tools', 'bench', 'test']);

/** package.json "imports": each #name, its TypeScript source and its compiled file. */
export type PackageImports = Readonly<Record<string, { types: string; default: string }>>;

/** One import: `specifier` as written in `from`, `to` the source file it stands for. */
export interface Edge {
  readonly from: string;
  readonly specifier: string;
  readonly to: string;
}

export function sourceFiles(root: string): string[] {
  return TOP_FOLDERS.flatMap((top) =>
    readdirSync(join(root, top), { recursive: true, encoding: 'utf8' })
      .filter((p) => p.endsWith('.ts'))
      .map((p) => posix.join(top, ...p.split(/[\\/]/))),
  ).sort();
}

/** Import and export declarations, `import()` calls and `import()` types, in source order. */
export function specifiersOf(path: string, text: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const literal =
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier
        ? node.moduleSpecifier
        : ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword
          ? node.arguments[0]
          : ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)
            ? node.argument.literal
            : undefined;
    if (literal && ts.isStringLiteral(literal)) found.push(literal.text);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(path, text, ts.ScriptTarget.Latest));
  return found;
}

const withoutDot = (path: string) => path.replace(/^\.\//, '');

/**
 * The source file a relative or #name specifier stands for; undefined for a package, and for a
 * #name package.json does not have.
 */
export function resolveSpecifier(
  from: string,
  specifier: string,
  imports: PackageImports,
): string | undefined {
  if (specifier.startsWith('.'))
    return posix.join(posix.dirname(from), specifier).replace(/\.js$/, '.ts');
  if (!specifier.startsWith('#')) return undefined;
  const exact = imports[specifier];
  if (exact) return withoutDot(exact.types);
  for (const [name, target] of Object.entries(imports)) {
    const [head, tail, ...more] = name.split('*');
    if (head === undefined || tail === undefined || more.length > 0) continue;
    const fits =
      specifier.length >= head.length + tail.length &&
      specifier.startsWith(head) &&
      specifier.endsWith(tail);
    if (fits)
      return withoutDot(
        target.types.replace('*', specifier.slice(head.length, specifier.length - tail.length)),
      );
  }
  return undefined;
}

/** Every import of the project's own files; `unresolved` lists #names package.json lacks. */
export function importGraph(
  root: string,
  files: readonly string[],
  imports: PackageImports,
): { edges: Edge[]; unresolved: string[] } {
  const edges: Edge[] = [];
  const unresolved: string[] = [];
  for (const from of files) {
    for (const specifier of specifiersOf(from, readFileSync(join(root, from), 'utf8'))) {
      const to = resolveSpecifier(from, specifier, imports);
      if (to !== undefined) edges.push({ from, specifier, to });
      else if (specifier.startsWith('#')) unresolved.push(`${from}: ${specifier}`);
    }
  }
  return { edges, unresolved };
}

/** libs/<name> or apps/<name> for their files, else the top folder. */
function unitOf(path: string): string {
  const [top, name] = path.split('/');
  return (top === 'libs' || top === 'apps') && name !== undefined ? `${top}/${name}` : (top ?? '');
}

/** Apps, and libraries outside their test/ and bench/ folders. */
function ships(path: string): boolean {
  const [top, , folder] = path.split('/');
  return top === 'apps' || (top === 'libs' && folder !== 'test' && folder !== 'bench');
}

/** Groups of nodes that reach each other (Tarjan's strongly connected components), each sorted. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(group.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) connect(node);
  return found;
}

function graphOf(pairs: Iterable<readonly [string, string]>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [from, to] of pairs) {
    const next = graph.get(from) ?? [];
    if (!next.includes(to)) next.push(to);
    graph.set(from, next);
  }
  return graph;
}

/** Files that import each other, directly or around a circle. */
export function fileCircles(edges: readonly Edge[]): string[][] {
  return circles(graphOf(edges.map((e) => [e.from, e.to] as const)));
}

/** Libraries (and apps) that import each other in the code that ships. */
export function libraryCircles(edges: readonly Edge[]): string[][] {
  return circles(
    graphOf(
      edges
        .filter((e) => ships(e.from) && ships(e.to) && unitOf(e.from) !== unitOf(e.to))
        .map((e) => [unitOf(e.from), unitOf(e.to)] as const),
    ),
  );
}

/** Relative imports whose file lies outside the importer's library, app or top folder. */
export function escapingImports(edges: readonly Edge[]): string[] {
  return edges
    .filter((e) => e.specifier.startsWith('.') && unitOf(e.from) !== unitOf(e.to))
    .map((e) => `${e.from}: '${e.specifier}' leaves ${unitOf(e.from)}`);
}

/** Folders of libs/ the layering does not place, and names it places that are no folder. */
export function unplacedLibraries(libraries: readonly string[], house: Layering): string[] {
  const placed = [...house.layers.flatMap((l) => l.libraries), ...house.testSupport];
  return [
    ...libraries.filter((l) => !placed.includes(l)).map((l) => `libs/${l} has no layer`),
    ...placed.filter((l) => !libraries.includes(l)).map((l) => `${l} is placed but not in libs/`),
  ];
}

/** Imports that go against the layering (layers.ts states the rules). */
export function layerViolations(edges: readonly Edge[], house: Layering): string[] {
  const problems: string[] = [];
  const libraryOf = (unit: string) => (unit.startsWith('libs/') ? unit.slice(5) : undefined);
  const isTestSupport = (unit: string) => house.testSupport.includes(libraryOf(unit) ?? '');
  const layerOf = (unit: string): number | undefined => {
    if (unit.startsWith('apps/')) return house.layers.length;
    const layer = house.layers.findIndex((l) => l.libraries.includes(libraryOf(unit) ?? ''));
    return layer < 0 ? undefined : layer;
  };
  const layerName = (layer: number) => house.layers[layer]?.name ?? 'apps';
  for (const e of edges) {
    const [from, to] = [unitOf(e.from), unitOf(e.to)];
    const problem = (why: string) => problems.push(`${e.from}: '${e.specifier}' ${why}`);
    if (OUTER.has(to)) {
      if (!OUTER.has(from)) problem(`reaches into ${to}/`);
      continue;
    }
    if (ships(e.from) && !ships(e.to)) problem('is test code');
    if (from === to || OUTER.has(from) || isTestSupport(from)) continue;
    if (isTestSupport(to)) {
      if (ships(e.from)) problem('is test support');
      continue;
    }
    const [own, theirs] = [layerOf(from), layerOf(to)];
    if (own !== undefined && theirs !== undefined && theirs > own)
      problem(`goes up from ${from} (${layerName(own)}) to ${to} (${layerName(theirs)})`);
  }
  return problems;
}

/** Imports of a self-contained library's shipped code that leave it. */
export function selfContainedViolations(edges: readonly Edge[], house: Layering): string[] {
  const units = new Set(house.selfContained.map((l) => `libs/${l}`));
  return edges
    .filter((e) => units.has(unitOf(e.from)) && ships(e.from) && unitOf(e.to) !== unitOf(e.from))
    .map((e) => `${e.from}: '${e.specifier}' is another library`);
}

/** #names whose compiled file is not the TypeScript source's place in dist/. */
export function mismatchedNames(imports: PackageImports): string[] {
  return Object.entries(imports)
    .filter(([, t]) => t.default !== `./dist/${withoutDot(t.types).replace(/\.ts$/, '.js')}`)
    .map(([name, t]) => `${name}: ${t.types} compiles to ${t.default}?`);
}
