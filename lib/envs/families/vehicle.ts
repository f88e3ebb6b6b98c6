/**
 * A car, after BFCL-V3's VehicleControlAPI (docs/design.md A.1). The engine starts only with the brake pressed, so
 * "press the brake, then start the engine" is a state dependency the model has to know from the tool list.
 *
 * State: `{engine, brake, doors, temperature, fuel}`; the tank holds at most 50 liters.
 */
import type { JsonValue } from '../../format/types';
import { Rng } from '../../prng';
import { ApiError, ApiFamily, Args, tool } from './base';

export type CarState = { engine: string; brake: string; doors: string; temperature: number; fuel: number };

export const TANK_SIZE = 50;

export const CAR_TOOLS = [
  tool('press_brake', 'press the brake pedal'),
  tool('start_engine', 'start the engine, brake needed'),
  tool('lock_doors', 'lock or unlock all doors', ['lock', 'boolean']),
  tool('set_temperature', 'set the cabin temperature', ['degrees', 'integer']),
  tool('get_fuel_level', 'show the fuel level'),
  tool('fill_fuel', 'add fuel in liters', ['liters', 'integer']),
];

export class Vehicle extends ApiFamily<CarState> {
  readonly name = 'vehicle';
  readonly tools = CAR_TOOLS;

  protected handle(name: string, a: Args): JsonValue {
    const s = this.state;
    switch (name) {
      case 'press_brake':
        s.brake = 'pressed';
        return { brake: 'pressed' };
      case 'start_engine':
        if (s.brake !== 'pressed') throw new ApiError('press the brake first');
        if (s.fuel <= 0) throw new ApiError('no fuel');
        s.engine = 'on';
        return { engine: 'on' };
      case 'lock_doors':
        s.doors = a.lock ? 'locked' : 'unlocked';
        return { doors: s.doors };
      case 'set_temperature': {
        const d = a.degrees as number;
        if (d < 16 || d > 30) throw new ApiError('degrees must be between 16 and 30');
        s.temperature = d;
        return { temperature: d };
      }
      case 'get_fuel_level':
        return { fuel: s.fuel, tank: TANK_SIZE };
      case 'fill_fuel': {
        const l = a.liters as number;
        if (l <= 0) throw new ApiError('liters must be positive');
        if (s.fuel + l > TANK_SIZE) throw new ApiError('the tank would overflow');
        s.fuel += l;
        return { fuel: s.fuel };
      }
    }
    throw new ApiError(`unknown function ${name}`);
  }

  static randomState(rng: Rng, _opts: { long?: boolean } = {}): CarState {
    return {
      engine: 'off',
      brake: 'released',
      doors: rng.pick(['locked', 'unlocked']),
      temperature: rng.int(18, 26),
      fuel: rng.int(5, 40),
    };
  }
}
