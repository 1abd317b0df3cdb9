import { launch } from '#runtime/launch';

await launch(new URL('../bundle/app.cjs', import.meta.url));
