import { toMnistDigit } from './mnist-style';

/**
 * The drawing pad: a canvas a person draws a digit on with mouse, pen or finger (pointer
 * events cover all three). White ink on black, like MNIST. `onChange` fires while drawing
 * (throttled by the caller's own pace) and when a stroke ends.
 */
export class DrawingPad {
  private readonly ctx: CanvasRenderingContext2D;
  private drawing = false;
  private last: { x: number; y: number } | null = null;
  private inked = false;

  constructor(
    private readonly canvas: HTMLCanvasElement,
    private readonly onChange: (final: boolean) => void,
  ) {
    const ctx = canvas.getContext('2d', { willReadFrequently: true });
    if (!ctx) throw new Error('drawing pad: no 2D canvas context');
    this.ctx = ctx;
    this.clear();
    canvas.style.touchAction = 'none';
    canvas.addEventListener('pointerdown', (e) => {
      canvas.setPointerCapture(e.pointerId);
      this.drawing = true;
      this.last = this.pos(e);
      this.dot(this.last);
    });
    canvas.addEventListener('pointermove', (e) => {
      if (!this.drawing) return;
      const p = this.pos(e);
      this.stroke(this.last ?? p, p);
      this.last = p;
      this.onChange(false);
    });
    const end = () => {
      if (!this.drawing) return;
      this.drawing = false;
      this.last = null;
      this.onChange(true);
    };
    canvas.addEventListener('pointerup', end);
    canvas.addEventListener('pointercancel', end);
  }

  get hasInk(): boolean {
    return this.inked;
  }

  /** For pictures put on the canvas from outside (the "test digit" button). */
  markInked(): void {
    this.inked = true;
  }

  clear(): void {
    this.ctx.fillStyle = '#000';
    this.ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
    this.inked = false;
  }

  /** The drawing as an MNIST-style 28x28 digit, pixels in [0, 1]. */
  digit(): Float32Array {
    const { width, height } = this.canvas;
    const rgba = this.ctx.getImageData(0, 0, width, height).data;
    const grey = new Float32Array(width * height);
    for (let i = 0; i < grey.length; i++) grey[i] = rgba[i * 4] / 255;
    return toMnistDigit(grey, width, height);
  }

  private pos(e: PointerEvent): { x: number; y: number } {
    const r = this.canvas.getBoundingClientRect();
    return {
      x: ((e.clientX - r.left) * this.canvas.width) / r.width,
      y: ((e.clientY - r.top) * this.canvas.height) / r.height,
    };
  }

  // A stroke 1/16 of the pad wide: a digit drawn across most of the pad is scaled to 20
  // pixels, which gives MNIST's typical 2-pixel pen.
  private get penWidth(): number {
    return this.canvas.width / 16;
  }

  private dot(p: { x: number; y: number }): void {
    this.ctx.fillStyle = '#fff';
    this.ctx.beginPath();
    this.ctx.arc(p.x, p.y, this.penWidth / 2, 0, Math.PI * 2);
    this.ctx.fill();
    this.inked = true;
  }

  private stroke(a: { x: number; y: number }, b: { x: number; y: number }): void {
    const c = this.ctx;
    c.strokeStyle = '#fff';
    c.lineWidth = this.penWidth;
    c.lineCap = 'round';
    c.lineJoin = 'round';
    c.beginPath();
    c.moveTo(a.x, a.y);
    c.lineTo(b.x, b.y);
    c.stroke();
    this.inked = true;
  }
}
