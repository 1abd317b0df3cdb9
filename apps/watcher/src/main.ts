import { launch } from '#runtime/launch';

await launch(new URL('../bundle/app.js', import.meta.url));
