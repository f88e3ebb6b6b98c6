/**
 * A brokerage account, after BFCL-V3's TradingBot (docs/design.md A.1). Orders are placed "open" (funds are checked,
 * not moved) and can be cancelled by id, so "place an order, then cancel that order" is a result dependency.
 *
 * State: `{balance, prices: {SYMBOL: price}, orders: {id, symbol, side, amount, status}[], next_id}`.
 * Prices and amounts are whole numbers: digits are one token each, so short numbers keep texts short.
 */
import type { JsonValue } from '../../format/types';
import { Rng } from '../../prng';
import { ApiError, ApiFamily, Args, tool } from './base';
import { SYMBOLS } from '../pools';

export type Order = { id: number; symbol: string; side: string; amount: number; status: string };
export type TradeState = { balance: number; prices: { [symbol: string]: number }; orders: Order[]; next_id: number };

export const TRADE_TOOLS = [
  tool('get_stock_price', 'get the price of a stock', ['symbol', 'string']),
  tool('place_order', 'buy or sell shares', ['symbol', 'string'], ['side', 'string'], ['amount', 'integer']),
  tool('cancel_order', 'cancel an open order', ['order_id', 'integer']),
  tool('get_balance', 'show the account balance'),
  tool('get_order_history', 'list all orders'),
];

export class Trading extends ApiFamily<TradeState> {
  readonly name = 'trading';
  readonly tools = TRADE_TOOLS;

  private price(symbol: string): number {
    const p = this.state.prices[symbol];
    if (typeof p !== 'number') throw new ApiError(`unknown symbol ${symbol}`);
    return p;
  }

  protected handle(name: string, a: Args): JsonValue {
    const s = this.state;
    switch (name) {
      case 'get_stock_price': {
        const sym = a.symbol as string;
        return { symbol: sym, price: this.price(sym) };
      }
      case 'place_order': {
        const sym = a.symbol as string;
        const side = a.side as string;
        const amount = a.amount as number;
        const p = this.price(sym);
        if (side !== 'buy' && side !== 'sell') throw new ApiError('side must be buy or sell');
        if (amount <= 0 || amount > 1000) throw new ApiError('amount must be between 1 and 1000');
        if (side === 'buy' && p * amount > s.balance) throw new ApiError('not enough balance');
        const id = s.next_id++;
        s.orders.push({ id, symbol: sym, side, amount, status: 'open' });
        return { order_id: id, status: 'open' };
      }
      case 'cancel_order': {
        const id = a.order_id as number;
        const o = s.orders.find((x) => x.id === id);
        if (!o) throw new ApiError(`no order with id ${id}`);
        if (o.status !== 'open') throw new ApiError(`order ${id} is not open`);
        o.status = 'cancelled';
        return { order_id: id, status: 'cancelled' };
      }
      case 'get_balance':
        return { balance: s.balance };
      case 'get_order_history':
        return { orders: s.orders.map((o) => ({ id: o.id, symbol: o.symbol, side: o.side, amount: o.amount,
          status: o.status })) };
    }
    throw new ApiError(`unknown function ${name}`);
  }

  /** Prices 20-400, balance 2000-9000, 0-2 past orders; `long` gives 12-18 orders (long_context). */
  static randomState(rng: Rng, opts: { long?: boolean } = {}): TradeState {
    const prices: { [s: string]: number } = {};
    for (const sym of SYMBOLS) prices[sym] = rng.int(20, 400);
    const orders: Order[] = [];
    let id = rng.int(100, 900);
    const n = opts.long ? rng.int(12, 18) : rng.int(0, 2);
    for (let i = 0; i < n; i++) {
      orders.push({ id: id++, symbol: rng.pick(SYMBOLS), side: rng.pick(['buy', 'sell']), amount: rng.int(1, 20),
        status: rng.pick(['open', 'filled', 'cancelled']) });
    }
    return { balance: rng.int(20, 90) * 100, prices, orders, next_id: id };
  }
}
