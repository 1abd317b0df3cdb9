import { readFileSync } from 'node:fs';

/** The marker, on the last non-blank line before a fence, that makes a shell block runnable. */
const RUNNABLE_MARKER = '<!-- runnable -->';

const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell', 'zsh', 'console']);

export interface CodeBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  code: string;
  shell: boolean;
  runnable: boolean;
}

export interface MarkedBlocks {
  blocks: CodeBlock[];
  /** Lines of markers that are not followed by a block (a typo would silently skip a block). */
  strayMarkers: number[];
}

const FENCE = /^\s*(`{3,}|~{3,})\s*([^`\s]*)/;

/** Fenced code blocks of a Markdown file (CommonMark fences, nested longer fences respected). */
export function codeBlocks(file: string, text = readFileSync(file, 'utf8')): MarkedBlocks {
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  const strayMarkers: number[] = [];
  let pendingMarker: number | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === RUNNABLE_MARKER) {
      if (pendingMarker !== undefined) strayMarkers.push(pendingMarker);
      pendingMarker = i + 1;
      continue;
    }
    const open = FENCE.exec(line);
    if (!open) {
      if (line.trim() !== '' && pendingMarker !== undefined) {
        strayMarkers.push(pendingMarker);
        pendingMarker = undefined;
      }
      continue;
    }
    const fence = open[1]!;
    const language = open[2]!.toLowerCase();
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = lines[j]!.trim();
      if (close.startsWith(fence[0]!.repeat(fence.length)) && /^(`+|~+)$/.test(close)) break;
      body.push(lines[j]!);
    }
    blocks.push({
      file,
      line: i + 1,
      language,
      code: body.join('\n'),
      shell: SHELL_LANGUAGES.has(language),
      runnable: pendingMarker !== undefined,
    });
    if (pendingMarker !== undefined && !SHELL_LANGUAGES.has(language))
      strayMarkers.push(pendingMarker);
    pendingMarker = undefined;
    i = j;
  }
  if (pendingMarker !== undefined) strayMarkers.push(pendingMarker);
  return { blocks, strayMarkers };
}

/** Shell words of a block without comments (good enough for paths and npm script names). */
export function words(code: string): string[] {
  return code
    .split('\n')
    .map((l) => l.replace(/(^|\s)#.*$/, ''))
    .join(' ')
    .split(/\s+/)
    .map((w) => w.replace(/^['"]|['";,)]+$/g, ''))
    .filter(Boolean);
}

/**
 * Repository paths a block names: words whose first segment is a top-level entry of the
 * repository (`./helm/backupjob-operator`, `config/samples/x.yaml`, `docker-compose.yml`).
 */
export function repositoryPaths(code: string, topLevel: ReadonlySet<string>): string[] {
  return words(code)
    .map((w) => w.replace(/^--?[\w-]+=/, '').replace(/^\.\//, ''))
    .filter((w) => !w.includes('$') && !w.includes('://'))
    .filter((w) => {
      const first = w.split('/')[0]!;
      return topLevel.has(first) && (w.includes('/') || /\.\w+$/.test(w));
    });
}

/** Scripts a block runs with `npm run <name>`. */
export function npmScripts(code: string): string[] {
  const out: string[] = [];
  const ws = words(code);
  for (let i = 0; i + 2 < ws.length; i++)
    if (ws[i] === 'npm' && ws[i + 1] === 'run') out.push(ws[i + 2]!);
  return out;
}
