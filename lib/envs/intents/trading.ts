/** Requests for the trading family (lib/envs/families/trading.ts). */
import { TradeState } from '../families/trading';
import { SYMBOLS } from '../pools';
import { Intent, IntentCtx, call, say } from './common';

/** A share count the balance can pay for at today's price, or null. */
function affordable(c: IntentCtx<TradeState>, sym: string): number | null {
  const max = Math.min(20, Math.floor(c.state.balance / c.state.prices[sym]));
  return max >= 1 ? c.rng.int(1, max) : null;
}

export const TRADE_INTENTS: Intent<TradeState>[] = [
  {
    name: 'price',
    make(c) {
      const s = c.rng.pick(SYMBOLS);
      return {
        calls: [call('get_stock_price', { symbol: s })],
        text: say(c.rng, ['what is the price of {s}?', 'how much is {s} trading at?', 'get me the current {s} price.'],
          { s }),
        miss: { text: say(c.rng, ['check a stock price for me.', 'what is the price of a stock?']),
          supply: say(c.rng, ['the symbol is {s}.', 'I mean {s}.'], { s }) },
      };
    },
  },
  {
    name: 'buy',
    make(c) {
      const s = c.rng.pick(SYMBOLS);
      const n = affordable(c, s);
      if (n === null) return null;
      return {
        calls: [call('place_order', { symbol: s, side: 'buy', amount: n })],
        text: say(c.rng, ['buy {n} shares of {s}.', 'place an order to buy {n} {s} shares.',
          'get me {n} shares of {s}.'], { n, s }),
        miss: { text: say(c.rng, ['buy some shares of {s}.', 'place a buy order for {s}.'], { s }),
          supply: say(c.rng, ['make it {n} shares.', 'buy {n} of them.'], { n }) },
      };
    },
  },
  {
    name: 'price_buy',
    make(c) {
      const s = c.rng.pick(SYMBOLS);
      const n = affordable(c, s);
      if (n === null) return null;
      return {
        calls: [call('get_stock_price', { symbol: s }), call('place_order', { symbol: s, side: 'buy', amount: n })],
        text: say(c.rng, ['check the price of {s}, then buy {n} shares.', 'look up {s} and buy {n} shares of it.'],
          { s, n }),
      };
    },
  },
  {
    name: 'sell',
    make(c) {
      const s = c.rng.pick(SYMBOLS);
      const n = c.rng.int(1, 20);
      return {
        calls: [call('place_order', { symbol: s, side: 'sell', amount: n })],
        text: say(c.rng, ['sell {n} shares of {s}.', 'place an order to sell {n} {s} shares.'], { n, s }),
        miss: { text: say(c.rng, ['sell some of my {s} shares.', 'place a sell order for {s}.'], { s }),
          supply: say(c.rng, ['sell {n} of them.', 'make it {n} shares.'], { n }) },
      };
    },
  },
  {
    name: 'cancel_that',
    make(c) {
      // Only right after this task placed an order: the id is in the conversation (a result dependency).
      const last = c.state.orders[c.state.orders.length - 1];
      const initial = c.memo.initial as TradeState | undefined;
      if (!last || last.status !== 'open' || !initial || initial.orders.some((o) => o.id === last.id)) return null;
      return { calls: [call('cancel_order', { order_id: last.id })],
        text: say(c.rng, ['cancel that order.', 'actually, cancel the order I just placed.']) };
    },
  },
  {
    name: 'cancel_id',
    make(c) {
      const open = c.state.orders.filter((o) => o.status === 'open');
      if (!open.length) return null;
      const id = c.rng.pick(open).id;
      return {
        calls: [call('cancel_order', { order_id: id })],
        text: say(c.rng, ['cancel order {id}.', 'please cancel my order {id}.'], { id }),
        miss: { text: say(c.rng, ['cancel one of my orders.', 'I want to cancel an order.']),
          supply: say(c.rng, ['the order id is {id}.', 'it is order {id}.'], { id }) },
      };
    },
  },
  {
    name: 'history_cancel',
    long: true,
    make(c) {
      const open = c.state.orders.filter((o) => o.status === 'open');
      const syms = open.map((o) => o.symbol).filter((s, _i, all) => all.indexOf(s) === all.lastIndexOf(s));
      if (!syms.length) return null;
      const s = c.rng.pick(syms);
      const id = open.find((o) => o.symbol === s)!.id;
      return {
        calls: [call('get_order_history'), call('cancel_order', { order_id: id })],
        text: say(c.rng, ['cancel my open {s} order.', 'find my open order for {s} and cancel it.'], { s }),
      };
    },
  },
  {
    name: 'balance',
    make(c) {
      return { calls: [call('get_balance')], text: say(c.rng,
        ['what is my balance?', 'how much money is in my account?']) };
    },
  },
  {
    name: 'history',
    long: true,
    make(c) {
      return { calls: [call('get_order_history')], text: say(c.rng,
        ['show my order history.', 'list all my orders.']) };
    },
  },
];
