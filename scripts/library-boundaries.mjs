// ESLint plugin `house`: a relative import stays inside the library (or app, or top folder) of the
// file that makes it. Another library is imported by its name from package.json "imports"
// (`#queue`), so a reader sees which library it is and a move inside that library breaks nothing.
import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** libs/<name> or apps/<name> for their files, else the top folder (test, bench, tools, …). */
function unitOf(path) {
  const [top, name] = relative(root, path).split(sep);
  return (top === 'libs' || top === 'apps') && name !== undefined ? `${top}/${name}` : top;
}

const relativeImportsStayInside = {
  meta: {
    type: 'problem',
    docs: {
      description:
        'Relative imports stay inside their library, app or top folder; other libraries are imported by #name',
    },
    messages: {
      leaves:
        "'{{source}}' leaves {{unit}} for {{target}}: import it by its #name from package.json imports",
    },
    schema: [],
  },
  create(context) {
    const file = context.physicalFilename;
    const unit = unitOf(file);
    function check(node) {
      const source = node.source;
      if (source?.type !== 'Literal' || typeof source.value !== 'string') return;
      if (!source.value.startsWith('.')) return;
      const target = unitOf(resolve(dirname(file), source.value));
      if (target !== unit)
        context.report({
          node: source,
          messageId: 'leaves',
          data: { source: source.value, unit, target },
        });
    }
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

export default {
  meta: { name: 'house' },
  rules: { 'relative-imports-stay-inside': relativeImportsStayInside },
};
