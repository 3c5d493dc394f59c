/**
 * Power draw falls back to the instant reading where the averaged one is N/A (pre-Ampere GPUs on new
 * drivers), as nvidia-smi's own `power.draw` does. The inputs are real fixtures with the average blanked.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseQueryGpuCsv, parseSmiXml } from '../../../src/sources/smi/index.js';

const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/nvidia-smi/${name}`, import.meta.url), 'utf8');
const XML = 'rtx-a5000-x2-procs-driver-590.44.01.xml';

describe('power draw: average, else instant', () => {
  it('XML: the averaged reading when present (6.41 W and 13.60 W in the fixture)', () => {
    expect(parseSmiXml(fixture(XML)).devices.map((d) => d.powerDrawMw)).toEqual([6410, 13600]);
  });

  it('XML: the instant reading when the average is N/A (6.52 W and 13.59 W)', () => {
    const text = fixture(XML).replace(/(<gpu_power_readings>[\s\S]*?)<average_power_draw>[^<]*<\/average_power_draw>/g, '$1<average_power_draw>N/A</average_power_draw>');
    expect(text).toContain('<average_power_draw>N/A</average_power_draw>\n\t\t\t<instant_power_draw>6.52 W');
    const devices = parseSmiXml(text).devices;
    expect(devices.map((d) => d.powerDrawMw)).toEqual([6520, 13590]);
    expect(devices[0]!.unavailable.powerDrawMw).toBeUndefined();
  });

  it('XML: null with the reason when both are N/A', () => {
    const text = fixture(XML).replace(/<(average|instant)_power_draw>[^<]*</g, '<$1_power_draw>N/A<');
    const d = parseSmiXml(text).devices[0]!;
    expect(d.powerDrawMw).toBeNull();
    expect(d.unavailable.powerDrawMw).toMatch(/N\/A/);
  });

  it('CSV: power.draw.instant when power.draw.average is [N/A]', () => {
    const csv = 'index, memory.total [MiB], memory.used [MiB], power.draw.average [W], power.draw.instant [W]\n0, 16384 MiB, 10 MiB, [N/A], 27.31 W\n';
    expect(parseQueryGpuCsv(csv)[0]!.powerDrawMw).toBe(27310);
  });
});
