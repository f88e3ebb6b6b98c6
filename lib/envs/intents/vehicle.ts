/** Requests for the vehicle family (lib/envs/families/vehicle.ts). */
import { CarState, TANK_SIZE } from '../families/vehicle';
import { Intent, call, say } from './common';

export const CAR_INTENTS: Intent<CarState>[] = [
  {
    name: 'start',
    make(c) {
      if (c.state.engine === 'on') return null;
      return { calls: [call('press_brake'), call('start_engine')],
        text: say(c.rng, ['start the car.', 'turn on the engine.', 'get the engine running.']) };
    },
  },
  {
    name: 'lock',
    make(c) {
      const lock = c.state.doors !== 'locked';
      return {
        calls: [call('lock_doors', { lock })],
        text: lock ? say(c.rng, ['lock all the doors.', 'lock the car.',
          'make sure the doors are locked.']) : say(c.rng, ['unlock the doors.', 'open the locks on the doors.']),
      };
    },
  },
  {
    name: 'temp',
    make(c) {
      let d = c.rng.int(16, 30);
      if (d === c.state.temperature) d = d === 30 ? 29 : d + 1;
      return {
        calls: [call('set_temperature', { degrees: d })],
        text: say(c.rng, ['set the temperature to {d} degrees.', 'make it {d} degrees inside.',
          'change the cabin to {d} degrees.'], { d }),
        miss: { text: say(c.rng, ['change the cabin temperature.', 'set a new temperature for me.']),
          supply: say(c.rng, ['make it {d} degrees.', '{d} degrees, please.'], { d }) },
      };
    },
  },
  {
    name: 'fuel',
    make(c) {
      return { calls: [call('get_fuel_level')], text: say(c.rng, ['how much fuel is left?', 'check the fuel level.']) };
    },
  },
  {
    name: 'fill',
    make(c) {
      const room = TANK_SIZE - c.state.fuel;
      if (room < 1) return null;
      const l = c.rng.int(1, Math.min(room, 30));
      return {
        calls: [call('fill_fuel', { liters: l })],
        text: say(c.rng, ['add {l} liters of fuel.', 'put {l} liters into the tank.'], { l }),
        miss: { text: say(c.rng, ['put some fuel in the tank.', 'add fuel for me.']),
          supply: say(c.rng, ['{l} liters, please.', 'add {l} liters.'], { l }) },
      };
    },
  },
  {
    name: 'check_fill',
    make(c) {
      const room = TANK_SIZE - c.state.fuel;
      if (room < 1) return null;
      const l = c.rng.int(1, Math.min(room, 30));
      return {
        calls: [call('get_fuel_level'), call('fill_fuel', { liters: l })],
        text: say(c.rng, ['check the fuel and then add {l} liters.', 'look at the fuel level and put in {l} liters.'],
          { l }),
      };
    },
  },
  {
    name: 'ready',
    make(c) {
      if (c.state.engine === 'on') return null;
      return {
        calls: [call('lock_doors', { lock: true }), call('press_brake'), call('start_engine')],
        text: say(c.rng, ['lock the doors and start the engine.', 'get the car ready: lock it and start the engine.']),
      };
    },
  },
];
