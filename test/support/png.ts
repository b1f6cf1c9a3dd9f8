import { readFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';

/** What a PNG file says of itself. */
export interface PngFacts {
  width: number;
  height: number;
  chunks: string[];
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * Reads a PNG file and checks it the way a decoder would before inflating: the signature, every
 * chunk's length and CRC-32, IHDR first, at least one IDAT, IEND last. Throws naming the defect.
 */
export function readPng(path: string): PngFacts {
  const bytes = readFileSync(path);
  if (!bytes.subarray(0, 8).equals(SIGNATURE)) throw new Error(`${path}: not a PNG signature`);
  const chunks: string[] = [];
  let offset = 8;
  let width = 0;
  let height = 0;
  while (offset < bytes.length) {
    if (offset + 12 > bytes.length) throw new Error(`${path}: truncated chunk at ${offset}`);
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    const end = offset + 8 + length;
    if (end + 4 > bytes.length) throw new Error(`${path}: chunk ${type} runs past the end`);
    if (crc32(bytes.subarray(offset + 4, end)) !== bytes.readUInt32BE(end))
      throw new Error(`${path}: bad CRC in chunk ${type}`);
    if (type === 'IHDR') {
      width = bytes.readUInt32BE(offset + 8);
      height = bytes.readUInt32BE(offset + 12);
    }
    chunks.push(type);
    offset = end + 4;
  }
  if (chunks[0] !== 'IHDR' || chunks.at(-1) !== 'IEND' || !chunks.includes('IDAT'))
    throw new Error(`${path}: chunks out of order: ${chunks.join(',')}`);
  return { width, height, chunks };
}
