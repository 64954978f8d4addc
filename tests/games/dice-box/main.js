// @3d-dice/dice-box-threejs as its README shows it: a DiceBox on
// #scene-container, rolled with dice notation, results from roll().  The
// box makes its renderer in initialize() (the package's own demo calls it
// before the first roll; the README's snippets assume it).  `window.game`
// is for the test's driver (tests/browser/games.test.mjs), not for sloptimize.
import DiceBox from '@3d-dice/dice-box-threejs';

const Box = new DiceBox('#scene-container', {
  onRollComplete: (results) => { window.game.rolls.push(results.total); },
});

window.game = { box: Box, rolls: [], ready: false, roll: (notation) => Box.roll(notation) };
Box.initialize().then(() => { window.game.ready = true; });
