// The browser bundle's entry: the whole API, as a page would import it.
import * as surf from '@surf/nn';

const info = await surf.init();
const x = surf.randn([8, 4]);
console.log(info.backend, await x.sum().item());
