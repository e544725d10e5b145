import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FlagTargeting, FlagType, Variants } from '../targeting/targeting.ts';
import { booleanVariantFor, enabledOf, initialTargeting, safeTargeting, switchTargeting } from './flag-serve.ts';

const ONOFF: Variants = { on: true, off: false };
const COLORS: Variants = { red: 'r', blue: 'b' };
const t = (state: FlagTargeting['state'], variants: Variants, defaultVariant: string | null): FlagTargeting => ({
  state,
  variants,
  defaultVariant,
  prerequisites: [],
  rules: [],
});

describe('enabled and the default serve (flag-serve.ts)', () => {
  const enabledRows: Array<[string, FlagType, FlagTargeting, boolean]> = [
    ['boolean serving on', 'boolean', t('ENABLED', ONOFF, 'on'), true],
    ['boolean serving off', 'boolean', t('ENABLED', ONOFF, 'off'), false],
    ['boolean DISABLED serving on', 'boolean', t('DISABLED', ONOFF, 'on'), false],
    ['boolean without a default variant', 'boolean', t('ENABLED', ONOFF, null), false],
    ['boolean with a default variant that does not exist', 'boolean', t('ENABLED', ONOFF, 'gone'), false],
    ['boolean with custom variants serving true', 'boolean', t('ENABLED', { yes: true, no: false }, 'yes'), true],
    ['string ENABLED', 'string', t('ENABLED', COLORS, 'red'), true],
    ['string ENABLED without a default variant', 'string', t('ENABLED', COLORS, null), true],
    ['string DISABLED', 'string', t('DISABLED', COLORS, 'red'), false],
    ['number DISABLED', 'number', t('DISABLED', { one: 1 }, 'one'), false],
    ['object ENABLED', 'object', t('ENABLED', { a: { x: 1 } }, 'a'), true],
  ];
  for (const [name, type, targeting, expected] of enabledRows) {
    it(`enabledOf: ${name} -> ${expected}`, () => assert.equal(enabledOf(type, targeting), expected));
  }

  const switchRows: Array<[string, FlagType, FlagTargeting, boolean, Partial<FlagTargeting> | undefined]> = [
    ['boolean on -> off serves off', 'boolean', t('ENABLED', ONOFF, 'on'), false, { state: 'ENABLED', defaultVariant: 'off' }],
    ['boolean off -> on serves on', 'boolean', t('ENABLED', ONOFF, 'off'), true, { state: 'ENABLED', defaultVariant: 'on' }],
    ['boolean DISABLED -> on is ENABLED again', 'boolean', t('DISABLED', ONOFF, 'off'), true, { state: 'ENABLED', defaultVariant: 'on' }],
    ['boolean DISABLED -> off stays DISABLED', 'boolean', t('DISABLED', ONOFF, 'on'), false, { state: 'DISABLED', defaultVariant: 'off' }],
    ['boolean custom variants -> on picks the true one', 'boolean', t('ENABLED', { yes: true, no: false }, 'no'), true, { defaultVariant: 'yes' }],
    ['boolean without a false variant cannot be switched off', 'boolean', t('ENABLED', { yes: true }, 'yes'), false, undefined],
    ['string -> off is DISABLED, default kept', 'string', t('ENABLED', COLORS, 'blue'), false, { state: 'DISABLED', defaultVariant: 'blue' }],
    ['string -> on is ENABLED', 'string', t('DISABLED', COLORS, 'blue'), true, { state: 'ENABLED', defaultVariant: 'blue' }],
  ];
  for (const [name, type, targeting, enabled, expected] of switchRows) {
    it(`switchTargeting: ${name}`, () => {
      const next = switchTargeting(type, targeting, enabled);
      if (expected === undefined) return assert.equal(next, undefined);
      assert.ok(next);
      for (const [field, value] of Object.entries(expected)) assert.deepEqual(next[field as keyof FlagTargeting], value, field);
      assert.equal(enabledOf(type, next), enabled, 'the switch reads back as set');
    });
  }

  it('booleanVariantFor prefers the standard names, then the first variant with the value', () => {
    assert.equal(booleanVariantFor({ yes: true, on: true }, true), 'on');
    assert.equal(booleanVariantFor({ a: false, b: false }, false), 'a');
    assert.equal(booleanVariantFor({ on: false, x: true }, true), 'x');
    assert.equal(booleanVariantFor({}, true), undefined);
  });

  it('initialTargeting is a switch over on/off', () => {
    assert.deepEqual(initialTargeting(true), t('ENABLED', ONOFF, 'on'));
    assert.equal(enabledOf('boolean', initialTargeting(false)), false);
  });

  const safeRows: Array<[string, FlagType, Variants, string | null, FlagTargeting]> = [
    ['boolean serves its false variant', 'boolean', ONOFF, 'on', t('ENABLED', ONOFF, 'off')],
    ['boolean without a false variant is DISABLED', 'boolean', { yes: true }, 'yes', t('DISABLED', { yes: true }, 'yes')],
    ['string is DISABLED with its default kept', 'string', COLORS, 'red', t('DISABLED', COLORS, 'red')],
    ['object is DISABLED', 'object', { a: {} }, null, t('DISABLED', { a: {} }, null)],
  ];
  for (const [name, type, variants, defaultVariant, expected] of safeRows) {
    it(`safeTargeting: ${name}, switched off`, () => {
      const safe = safeTargeting(type, variants, defaultVariant);
      assert.deepEqual(safe, expected);
      assert.equal(enabledOf(type, safe), false);
    });
  }
});
