import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decimalToMinorUnits, integerMinorUnits, minorUnitExponent, rescaleMinorUnits } from '../../../src/gateways/shared/amounts.ts';
import { fromUnixSecondsOrMillis, parseLenientTimestamp } from '../../../src/gateways/shared/timestamps.ts';

describe('lenient gateway timestamps', () => {
  const cases: Array<[string, string]> = [
    ['2025-01-01T04:15:39Z', '2025-01-01T04:15:39.000Z'],
    ['2025-01-01T04:15:39.1234567Z', '2025-01-01T04:15:39.123Z'],
    ['2025-05-12T22:47:05.813331521Z', '2025-05-12T22:47:05.813Z'],
    ['2026-06-27T10:04:58.396-03:00', '2026-06-27T13:04:58.396Z'],
    ['2020-07-06T14:01:51+0000', '2020-07-06T14:01:51.000Z'],
    ['2020-07-06T14:01:51+05', '2020-07-06T09:01:51.000Z'],
    ['2024-06-12 16:45:03', '2024-06-12T16:45:03.000Z'],
    ['2024-06-12T16:45', '2024-06-12T16:45:00.000Z'],
  ];
  for (const [input, expected] of cases) {
    test(`${input} → ${expected}`, () => assert.equal(parseLenientTimestamp(input)?.toISOString(), expected));
  }
  test("a time without a zone takes the driver's zone", () => {
    assert.equal(parseLenientTimestamp('2024-06-12 16:45:03', '-03:00')?.toISOString(), '2024-06-12T19:45:03.000Z');
  });
  test('not instants: undefined', () => {
    for (const input of ['2025-02-30T00:00:00Z', '2025-13-01T00:00:00Z', '2025-01-01T24:00:00Z', '2025-01-01', 'yesterday', '2025-01-01T00:00:00+25:00']) {
      assert.equal(parseLenientTimestamp(input), undefined, input);
    }
  });
  test('unix seconds and milliseconds', () => {
    assert.equal(fromUnixSecondsOrMillis(1742505638).toISOString(), '2025-03-20T21:20:38.000Z');
    assert.equal(fromUnixSecondsOrMillis(1742505638683).toISOString(), '2025-03-20T21:20:38.683Z');
  });
});

describe("decimal amounts to the currency's minor units (ISO 4217 exponent)", () => {
  test('exact where floating point is not (BRL, exponent 2)', () => {
    assert.equal(decimalToMinorUnits(4.35, 'BRL'), 435);
    assert.equal(decimalToMinorUnits(0.29, 'BRL'), 29, '0.29 * 100 is 28.999999999999996 in floating point');
    assert.equal(decimalToMinorUnits('5.00', 'BRL'), 500);
    assert.equal(decimalToMinorUnits('1484.34', 'BRL'), 148434);
    assert.equal(decimalToMinorUnits(100, 'BRL'), 10000);
    assert.equal(decimalToMinorUnits('0.1', 'BRL'), 10);
    assert.equal(decimalToMinorUnits('-2.50', 'BRL'), -250);
    assert.equal(decimalToMinorUnits('1.230', 'BRL'), 123, 'trailing zeros past the minor unit are fine');
  });

  test('exponent 0 (CLP, JPY and the other zero-decimal currencies): the amount as it is', () => {
    for (const currency of ['CLP', 'JPY', 'KRW', 'VND', 'ISK', 'UGX', 'XOF', 'clp']) assert.equal(decimalToMinorUnits(1500, currency), 1500, currency);
    assert.equal(decimalToMinorUnits('1500.00', 'CLP'), 1500);
    assert.equal(decimalToMinorUnits('100.5', 'JPY'), undefined, 'half a yen is malformed, not rounded');
  });

  test('exponent 3 (BHD, KWD, IQD, JOD, LYD, OMR, TND): thousandths', () => {
    for (const currency of ['BHD', 'KWD', 'IQD', 'JOD', 'LYD', 'OMR', 'TND']) assert.equal(decimalToMinorUnits('12.345', currency), 12345, currency);
    assert.equal(decimalToMinorUnits(0.29, 'KWD'), 290);
    assert.equal(decimalToMinorUnits('1.2345', 'KWD'), undefined);
  });

  test('exponent 4 (CLF, UYW), and 2 for a currency not said or not in the table', () => {
    assert.equal(decimalToMinorUnits('1.2345', 'CLF'), 12345);
    assert.equal(minorUnitExponent(undefined), 2);
    assert.equal(minorUnitExponent('XAU'), 2);
    assert.equal(minorUnitExponent('HUF'), 2);
    assert.equal(minorUnitExponent('MGA'), 2);
  });

  test('finer than the minor unit, or not a plain decimal: undefined', () => {
    for (const value of ['1.005', 1e21, '1e3', 'R$ 5,00', '', null, Number.NaN]) assert.equal(decimalToMinorUnits(value, 'BRL'), undefined, String(value));
  });

  test('rescaling integer minor units is exact or undefined', () => {
    assert.equal(rescaleMinorUnits(500, 0, 2), 50000);
    assert.equal(rescaleMinorUnits(4000, 2, 0), 40);
    assert.equal(rescaleMinorUnits(4010, 2, 0), undefined);
    assert.equal(rescaleMinorUnits(2000, 2, 2), 2000);
  });

  test('integer minor units from JSON or a form', () => {
    assert.equal(integerMinorUnits('3100'), 3100);
    assert.equal(integerMinorUnits(150), 150);
    assert.equal(integerMinorUnits('31.00'), undefined);
  });
});
