// pixi.js exports this entry without types: it only registers pixi's eval-free shader code.
declare module 'pixi.js/unsafe-eval';
