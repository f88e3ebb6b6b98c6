/**
 * Synthetic functions of the general tool-use corpus (the ToolACE stand-in, docs/design.md A.6 / B): everyday APIs
 * that are NOT the world's families, composed from a modest word pool, each with request phrasings and a
 * plausible result. A model SFT-ed on them learns the *format* and the habit of mapping requests to calls,
 * not the world's functions.
 */
import type { JsonValue, ParamType, ToolSpec } from '../format/types';
import { Rng } from '../prng';
import { CONTACTS, FILE_TEXTS, MESSAGE_TEXTS, REMINDER_TITLES, TIMES } from './pools';

export const CITIES = ['paris', 'london', 'tokyo', 'berlin', 'rome', 'madrid', 'cairo', 'lima', 'oslo', 'seoul'];
const DISHES = ['pizza', 'sushi', 'pasta', 'salad', 'soup', 'tacos', 'curry', 'noodles'];
const RESTAURANTS = ['luigi', 'sakura', 'bistro', 'garden', 'harbor'];
const SONGS = ['yellow', 'imagine', 'sunrise', 'river', 'dreams', 'thunder'];
const TOPICS = ['sports', 'science', 'music', 'travel', 'business', 'health'];
const LANGUAGES = ['french', 'spanish', 'german', 'italian', 'japanese'];
const CURRENCIES = ['euro', 'dollar', 'yen', 'pound'];
const MOVIES = ['avatar', 'frozen', 'inception', 'jaws', 'titanic'];
const INGREDIENTS = ['rice', 'chicken', 'tomato', 'cheese', 'egg', 'potato'];
const WEATHER = ['sunny', 'rainy', 'cloudy', 'windy', 'snowy'];
const SOUNDS = ['bell', 'chime', 'beep', 'piano', 'birds'];
const TASK_TITLES = ['clean the kitchen', 'call the doctor', 'wash the car', 'plan the trip', 'read a book',
  'visit grandma'];
/**
 * Todo titles also draw on the world's phrases, so their words are known everywhere (docs/design.md B: closed
 * vocabulary).
 */
const TODO_TITLES = TASK_TITLES.concat(REMINDER_TITLES);
const STATUS_TEXTS = MESSAGE_TEXTS.concat(FILE_TEXTS);
const POST_WORDS = Array.from(new Set(STATUS_TEXTS.flatMap((t) => t.split(' ')).filter((w) => w.length >= 4))).sort();
const WORDS = ['hello', 'thank you', 'good morning', 'where is the station', 'how much is this'];

type Gen = (rng: Rng) => JsonValue;
const from = (pool: readonly (string | number)[]): Gen => (rng) => rng.pick(pool);
const intIn = (lo: number, hi: number): Gen => (rng) => rng.int(lo, hi);

export interface SynthParam {
  name: string;
  type: ParamType;
  gen: Gen;
}

export interface SynthFunction {
  spec: ToolSpec;
  params: SynthParam[];
  /** Request templates; `{param}` slots are filled with the argument values. */
  asks: string[];
  result(args: { [k: string]: JsonValue }, rng: Rng): JsonValue;
}

function fn(name: string, description: string, params: [string, ParamType, Gen][], asks: string[],
  result: SynthFunction['result']): SynthFunction {
  return {
    spec: { name, description, params: params.map(([n, type]) => ({ name: n, type, required: true })) },
    params: params.map(([n, type, gen]) => ({ name: n, type, gen })),
    asks,
    result,
  };
}

export const SYNTH_FUNCTIONS: SynthFunction[] = [
  fn('get_weather', 'get the weather in a city', [['city', 'string', from(CITIES)]],
    ['what is the weather like in {city}?', 'is it raining in {city} today?',
    'please look up the forecast for {city}.'], (a, r) => ({ city: a.city, weather: r.pick(WEATHER),
    degrees: r.int(-5, 35) })),
  fn('get_local_time', 'get the time in a city', [['city', 'string', from(CITIES)]],
    ['what time is it in {city}?', 'tell me the local time in {city}.'],
    (a, r) => ({ city: a.city, time: r.pick(TIMES) })),
  fn('book_table', 'reserve a restaurant table', [['restaurant', 'string', from(RESTAURANTS)],
    ['time', 'string', from(TIMES)], ['people', 'integer', intIn(1, 8)]],
    ['reserve a table at {restaurant} for {people} at {time}.',
    'book {restaurant} at {time}, we are {people} people.'],
    (_a, r) => ({ booking_id: r.int(100, 999), status: 'confirmed' })),
  fn('order_food', 'order a dish for delivery', [['dish', 'string', from(DISHES)],
    ['quantity', 'integer', intIn(1, 5)]], ['order {quantity} {dish} for delivery.',
    'I am hungry, get me {quantity} portions of {dish}.'], (a, r) =>
    ({ order_id: r.int(100, 999), total: (a.quantity as number) * r.int(5, 15) })),
  fn('play_song', 'play a song by title', [['title', 'string', from(SONGS)]],
    ['play {title}.', 'put on the song {title}.', 'actually, I want to hear {title}.'], (a) => ({ playing: a.title })),
  fn('set_volume', 'change the speaker volume', [['level', 'integer', intIn(0, 10)]],
    ['set the volume to {level}.', 'please turn the sound to level {level}.'], (a) => ({ volume: a.level })),
  fn('translate_text', 'translate a phrase', [['text', 'string', from(WORDS)],
    ['language', 'string', from(LANGUAGES)]], ['translate "{text}" into {language}.',
    'how do you say "{text}" in {language}?'], (a) => ({ language: a.language, status: 'translated' })),
  fn('convert_currency', 'convert money to a currency', [['amount', 'integer', intIn(5, 500)],
    ['currency', 'string', from(CURRENCIES)]], ['convert {amount} into {currency}.',
    'how much is {amount} in {currency}?'], (a, r) => ({ currency: a.currency,
    result: Math.max(1, Math.round((a.amount as number) * (0.5 + r.next()))) })),
  fn('search_recipes', 'find recipes with an ingredient', [['ingredient', 'string', from(INGREDIENTS)]],
    ['find me a recipe with {ingredient}.', 'what can I cook with {ingredient}?'],
    (_a, r) => ({ recipes: r.sample(DISHES, 2) })),
  fn('create_event', 'add an event to the calendar', [['title', 'string', from(TASK_TITLES)],
    ['time', 'string', from(TIMES)]], ['put "{title}" in my calendar at {time}.', 'schedule {title} at {time}.'],
    (_a, r) => ({ event_id: r.int(1, 99) })),
  fn('list_events', 'show calendar events', [], ['what is on my calendar?', 'show my events for today.'],
    (_a, r) => ({ events: r.sample(TASK_TITLES, 2) })),
  fn('set_alarm', 'set an alarm clock', [['time', 'string', from(TIMES)]],
    ['wake me up at {time}.', 'set an alarm for {time}.', 'at {time}, ring the alarm.'],
    (a) => ({ alarm: a.time, status: 'set' })),
  fn('create_task', 'add an item to the todo list', [['title', 'string', from(TODO_TITLES)]],
    ['add "{title}" to my todo list.', 'I need to {title}, put it on my list.',
    'remind me to {title}: put it on my todo list.', 'please remind me to {title} with a todo item.'],
    (_a, r) => ({ task_id: r.int(1, 99) })),
  fn('complete_task', 'mark a todo item as done', [['task_id', 'integer', intIn(1, 99)]],
    ['mark task {task_id} as done.', 'I finished task {task_id}.', 'task {task_id} is complete.'],
    (a) => ({ task_id: a.task_id, done: true })),
  fn('snooze_reminder', 'delay the next calendar reminder', [['minutes', 'integer', intIn(5, 60)]],
    ['snooze my next reminder by {minutes} minutes.', 'reminder later, please: {minutes} minutes.',
    'one more thing: push the reminder back {minutes} minutes.'], (a) => ({ minutes: a.minutes, status: 'snoozed' })),
  fn('reminder_sound', 'choose the sound of calendar reminders', [['sound', 'string', from(SOUNDS)]],
    ['make my reminders ring with the {sound} sound.', 'change the reminder sound to {sound}.'],
    (a) => ({ sound: a.sound, status: 'changed' })),
  fn('mute_reminders', 'silence calendar reminders', [['hours', 'integer', intIn(1, 8)]],
    ['mute my reminders for {hours} hours.', 'no reminders for {hours} hours, please.'],
    (a) => ({ muted_hours: a.hours })),
  fn('search_posts', 'find posts with a word', [['keyword', 'string', from(POST_WORDS)]],
    ['find my posts about {keyword}.', 'search my posts for "{keyword}".'], (_a, r) => ({ posts: r.int(0, 5) })),
  fn('post_status', 'share a status update', [['text', 'string', from(STATUS_TEXTS)]],
    ['share "{text}" on my profile.', 'post the status "{text}".'], (a) => ({ posted: true, text: a.text })),
  fn('set_wifi', 'turn the wifi on or off', [['enabled', 'boolean', from([true, false] as never)]],
    ['set wifi enabled to {enabled}.', 'change the wifi setting to {enabled}.'], (a) => ({ wifi: a.enabled })),
  fn('get_news', 'get the latest news on a topic', [['topic', 'string', from(TOPICS)]],
    ['what is new in {topic}?', 'show me the {topic} news.'], (a, r) => ({ topic: a.topic, stories: r.int(2, 9) })),
  fn('find_hotel', 'find a hotel in a city', [['city', 'string', from(CITIES)], ['nights', 'integer', intIn(1, 7)]],
    ['find a hotel in {city} for {nights} nights.', 'I need a room in {city} for {nights} nights.'],
    (_a, r) => ({ hotel: r.pick(RESTAURANTS), price: r.int(50, 300) })),
  fn('book_flight', 'book a flight between cities', [['origin', 'string', from(CITIES)],
    ['destination', 'string', from(CITIES)]], ['book a flight from {origin} to {destination}.',
    'fly me from {origin} to {destination}.'], (_a, r) => ({ flight_id: r.int(100, 999), status: 'booked' })),
  fn('get_distance', 'distance between two cities', [['origin', 'string', from(CITIES)],
    ['destination', 'string', from(CITIES)]], ['how far is {origin} from {destination}?',
    'what is the distance from {origin} to {destination}?'], (_a, r) => ({ km: r.int(100, 9000) })),
  fn('calculate_tip', 'compute a tip for a bill', [['bill', 'integer', intIn(10, 200)],
    ['percent', 'integer', intIn(5, 25)]], ['what is a {percent} percent tip on {bill}?',
    'work out the tip: bill {bill}, {percent} percent.'], (a) =>
    ({ tip: Math.round(((a.bill as number) * (a.percent as number)) / 100) })),
  fn('send_email', 'send an email to a person', [['recipient', 'string', from(CONTACTS)],
    ['subject', 'string', from(TOPICS)]], ['email {recipient} about {subject}.',
    'write an email to {recipient} with the subject {subject}.'], (_a, r) => ({ sent: true, email_id: r.int(1, 999) })),
  fn('get_movie_times', 'show times for a movie', [['movie', 'string', from(MOVIES)],
    ['city', 'string', from(CITIES)]], ['when is {movie} playing in {city}?',
    'find show times for {movie} in {city}.'], (_a, r) => ({ times: r.sample(TIMES, 2) })),
  fn('check_flight_status', 'check if a flight is on time', [['flight_id', 'integer', intIn(100, 999)]],
    ['is flight {flight_id} on time?', 'check the status of flight {flight_id}.'],
    (a, r) => ({ flight_id: a.flight_id, status: r.pick(['on time', 'late', 'boarding']) })),
  fn('rent_car', 'rent a car in a city', [['city', 'string', from(CITIES)], ['days', 'integer', intIn(1, 10)]],
    ['rent a car in {city} for {days} days.', 'I need a rental car in {city}, {days} days.'],
    (_a, r) => ({ rental_id: r.int(100, 999), price: r.int(30, 400) })),
  fn('add_numbers', 'add two numbers', [['first', 'integer', intIn(1, 99)], ['second', 'integer', intIn(1, 99)]],
    ['what is {first} plus {second}?', 'use the calculator to add {first} and {second}.'],
    (a) => ({ sum: (a.first as number) + (a.second as number) })),
];
