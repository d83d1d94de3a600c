/**
 * Who is in the demo and what they say: the customers of a small online shop, "Northwind", its
 * support staff, and the lines each of them writes, in English or Russian. Only data and a seeded
 * random source; the script that uses them is in Demo.ts.
 */
import type { Subject } from "./DemoPictures.js"

/** The languages simulated people write in. */
export type Language = "en" | "ru"

/** A simulated person. */
export interface Person {
  readonly first_name: string
  readonly last_name: string
  /** "" for people without a username, as many have. */
  readonly username: string
  readonly language: Language
}

/** A deterministic random source (mulberry32): the same seed gives the same sequence. */
export interface Random {
  /** A number in [0, 1). */
  readonly next: () => number
  /** A whole number in [min, max]. */
  readonly int: (min: number, max: number) => number
  /** A number in [min, max). */
  readonly between: (min: number, max: number) => number
  readonly chance: (probability: number) => boolean
  readonly pick: <A>(items: ReadonlyArray<A>) => A
}

export const random = (seed: number): Random => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    between: (min, max) => min + next() * (max - min),
    chance: (probability) => next() < probability,
    pick: (items) => items[Math.floor(next() * items.length)]!
  }
}

const en = (first_name: string, last_name: string, username = ""): Person => ({
  first_name,
  last_name,
  username,
  language: "en"
})
const ru = (first_name: string, last_name: string, username = ""): Person => ({
  first_name,
  last_name,
  username,
  language: "ru"
})

/** The first twenty customers, in the order they first write. */
export const customers: ReadonlyArray<Person> = [
  en("Emma", "Wilson", "emma_wilson"),
  ru("Анна", "Петрова", "anna_petrova"),
  en("Lucas", "Martin"),
  ru("Дмитрий", "Иванов", "dima_ivanov"),
  en("Sofia", "Rossi", "sofiarossi"),
  en("Aisha", "Khan", "aisha_k"),
  ru("Мария", "Соколова"),
  en("Noah", "Becker", "noahb"),
  ru("Алексей", "Смирнов", "alex_smirnov"),
  en("Chloé", "Dubois", "chloe_dbs"),
  en("Daniel", "Kim"),
  ru("Екатерина", "Волкова", "katya_volkova"),
  en("Grace", "Adeyemi", "grace_ade"),
  ru("Сергей", "Кузнецов"),
  en("Mia", "Novak", "mianovak"),
  en("Ethan", "Park", "ethan_park"),
  ru("Ольга", "Морозова", "olga_moroz"),
  en("Hannah", "Schmidt"),
  ru("Иван", "Попов", "ivan_popov"),
  en("Mateo", "García", "mateo_g")
]

const moreFirst: Readonly<Record<Language, ReadonlyArray<string>>> = {
  en: ["Oliver", "Ava", "James", "Isla", "Leo", "Zoe", "Jack", "Nora", "Samuel", "Lily", "Omar", "Elena", "Yuki"],
  ru: ["Никита", "Полина", "Артём", "Дарья", "Михаил", "Алина", "Егор", "Виктория", "Кирилл", "Софья"]
}
const moreLast: Readonly<Record<Language, ReadonlyArray<string>>> = {
  en: ["Taylor", "Brown", "Silva", "Jensen", "Müller", "Nguyen", "Cohen", "Walsh", "Haddad", "Larsen", "Tanaka"],
  ru: ["Новиков", "Фёдоров", "Лебедев", "Козлов", "Павлов", "Семёнов", "Голубев", "Виноградов", "Богданов"]
}

/** Russian women's surnames take an "а". */
const feminine = new Set(["Полина", "Дарья", "Алина", "Виктория", "Софья"])

/** The n-th person (from 0): the named customers first, then names combined deterministically. */
export const personAt = (n: number): Person => {
  if (n < customers.length) return customers[n]!
  const language: Language = n % 3 === 0 ? "ru" : "en"
  const firsts = moreFirst[language]
  const lasts = moreLast[language]
  const first = firsts[n % firsts.length]!
  const last = lasts[Math.floor(n / firsts.length) % lasts.length]!
  const username = n % 4 === 0 ? "" : `${language === "ru" ? "user" : first.toLowerCase()}_${n}`
  return language === "ru"
    ? ru(first, feminine.has(first) ? `${last}а` : last, username)
    : en(first, last, username)
}

/** The support staff in the staff group; the first one is its creator. */
export const staff: ReadonlyArray<Person> = [
  en("Olivia", "Bennett", "olivia_northwind"),
  ru("Максим", "Орлов", "max_orlov"),
  en("Priya", "Nair", "priya_nw")
]

/** Text in each language; `{first}` is the customer's first name, `{order}` their order number. */
export type Line = Readonly<Record<Language, string>>

/** What a customer asks about: the inline button they press and what they then write. */
export interface Topic {
  readonly data: string
  readonly button: Line
  /** The backend's short answer to the button (answerCallbackQuery) and its follow-up message. */
  readonly toast: Line
  readonly prompt: Line
  readonly issues: ReadonlyArray<Line>
  readonly photo: { readonly subject: Subject; readonly captions: ReadonlyArray<Line> }
  readonly followUps: ReadonlyArray<Line>
  /** The staff's answers, sent as replies to the customer's routed message. */
  readonly answers: ReadonlyArray<Line>
}

export const topics: ReadonlyArray<Topic> = [
  {
    data: "order",
    button: { en: "📦 Where is my order?", ru: "📦 Где мой заказ?" },
    toast: { en: "Let's find your parcel", ru: "Найдём вашу посылку" },
    prompt: {
      en: "Please send your order number (it starts with NW-). If something arrived damaged, a photo helps.",
      ru: "Пришлите, пожалуйста, номер заказа (начинается с NW-). Если что-то пришло повреждённым, пришлите фото."
    },
    issues: [
      { en: "Hi, my order {order} still hasn't arrived, it's been a week.", ru: "Здравствуйте! Заказ {order} так и не пришёл, прошла неделя." },
      { en: "Hello! Tracking for {order} hasn't changed since Monday.", ru: "Трек-номер заказа {order} не обновляется с понедельника." },
      { en: "The courier was supposed to come today, order {order}. Nobody came.", ru: "Курьер должен был приехать сегодня, заказ {order}. Никто не пришёл." }
    ],
    photo: {
      subject: "parcel",
      captions: [
        { en: "And the last one arrived like this 😕", ru: "А прошлый заказ пришёл вот таким 😕" },
        { en: "The box is crushed on one side", ru: "Коробка помята с одной стороны" }
      ]
    },
    followUps: [
      { en: "Any news about {order}?", ru: "Есть новости по заказу {order}?" },
      { en: "Can I pick it up myself instead?", ru: "А можно забрать самому из пункта выдачи?" }
    ],
    answers: [
      {
        en: "Hi {first}, sorry for the wait! {order} is at our local depot; the courier brings it tomorrow before 14:00.",
        ru: "{first}, здравствуйте! Заказ {order} уже на складе в вашем городе, курьер привезёт его завтра до 14:00."
      },
      {
        en: "{first}, I've checked: {order} was delayed at sorting. It's moving again, you'll get an SMS with the slot.",
        ru: "{first}, проверил: заказ {order} задержался на сортировке. Уже едет, слот доставки придёт в SMS."
      }
    ]
  },
  {
    data: "payment",
    button: { en: "💳 Payment problem", ru: "💳 Проблема с оплатой" },
    toast: { en: "We'll sort it out", ru: "Разберёмся" },
    prompt: {
      en: "Tell us what went wrong with the payment, and a colleague will check it.",
      ru: "Опишите, что случилось с оплатой, и коллега всё проверит."
    },
    issues: [
      { en: "I was charged twice for {order}.", ru: "С карты списали деньги дважды за заказ {order}." },
      { en: "My card keeps getting declined at checkout.", ru: "Не проходит оплата картой, пишет ошибку." }
    ],
    photo: {
      subject: "screenshot",
      captions: [
        { en: "This is the error I get", ru: "Вот такая ошибка" },
        { en: "Screenshot from the checkout page", ru: "Скриншот со страницы оплаты" }
      ]
    },
    followUps: [
      { en: "Should I try another card meanwhile?", ru: "Может, пока попробовать другую карту?" },
      { en: "The bank says the money is on hold.", ru: "В банке говорят, что деньги заморожены." }
    ],
    answers: [
      {
        en: "Thanks {first}, I see the double charge. The second one is refunded; it takes 3–5 days to show up.",
        ru: "{first}, спасибо, вижу двойное списание. Второй платёж вернули, деньги придут за 3–5 дней."
      },
      {
        en: "{first}, the payment provider had an outage this morning. Please try again now, it should go through.",
        ru: "{first}, утром у платёжного сервиса был сбой. Попробуйте ещё раз, сейчас должно пройти."
      }
    ]
  },
  {
    data: "return",
    button: { en: "↩️ Return an item", ru: "↩️ Вернуть товар" },
    toast: { en: "Returns are free within 14 days", ru: "Возврат бесплатный в течение 14 дней" },
    prompt: {
      en: "Which item would you like to return, and why? A colleague will send you a return label.",
      ru: "Какой товар хотите вернуть и почему? Коллега пришлёт этикетку для возврата."
    },
    issues: [
      { en: "I'd like to return the mug from {order}, wrong colour.", ru: "Хочу вернуть кружку из заказа {order}, не тот цвет." },
      { en: "The jacket from {order} is too small. Can I swap it for an L?", ru: "Куртка из заказа {order} мала. Можно обменять на L?" }
    ],
    photo: {
      subject: "item",
      captions: [
        { en: "This is the one", ru: "Вот она" },
        { en: "Photo of the item, never used", ru: "Фото товара, не использовался" }
      ]
    },
    followUps: [
      { en: "Do I need the original box?", ru: "Нужна ли оригинальная коробка?" }
    ],
    answers: [
      {
        en: "No problem, {first}! I've emailed you a return label; drop the parcel at any post office within 14 days.",
        ru: "Без проблем, {first}! Отправили этикетку на почту, сдайте посылку в любом отделении в течение 14 дней."
      },
      {
        en: "{first}, the swap is booked: the courier brings the new size and takes the old one back.",
        ru: "{first}, обмен оформлен: курьер привезёт новый размер и заберёт старый."
      }
    ]
  },
  {
    data: "human",
    button: { en: "💬 Talk to a person", ru: "💬 Связаться с оператором" },
    toast: { en: "A colleague will answer shortly", ru: "Оператор скоро ответит" },
    prompt: {
      en: "A colleague will answer here shortly. Please write your question in one message.",
      ru: "Оператор скоро ответит здесь. Напишите, пожалуйста, вопрос одним сообщением."
    },
    issues: [
      { en: "Do you ship to Kazakhstan?", ru: "Вы доставляете в Казахстан?" },
      { en: "Can I change the delivery address for {order}?", ru: "Можно изменить адрес доставки для заказа {order}?" },
      { en: "Is there a discount for ordering 10 of the same thing?", ru: "Есть скидка, если заказать 10 одинаковых товаров?" }
    ],
    photo: {
      subject: "receipt",
      captions: [
        { en: "Receipt attached", ru: "Чек прилагаю" },
        { en: "Here's what I paid last time", ru: "Вот сколько я заплатил в прошлый раз" }
      ]
    },
    followUps: [
      { en: "Also, are you open on Sundays?", ru: "И ещё: вы работаете по воскресеньям?" }
    ],
    answers: [
      {
        en: "Hi {first}! Yes, we do; delivery takes 7–10 days. I've changed the address on {order} too.",
        ru: "{first}, здравствуйте! Да, доставляем, срок 7–10 дней. Адрес в заказе {order} тоже поменяли."
      },
      {
        en: "{first}, from 10 items there's 15% off; I'll send you a promo code in a minute.",
        ru: "{first}, от 10 штук скидка 15%, сейчас пришлю промокод."
      }
    ]
  }
]

/** The backend's greeting to `/start`, above the topic buttons. */
export const greeting: Line = {
  en: "Hi {first}! This is Northwind support. What can we help you with?",
  ru: "{first}, здравствуйте! Это поддержка Northwind. Чем можем помочь?"
}

/** The backend's answer to other commands. */
export const unknownCommand: Line = {
  en: "Send /start to see what I can do.",
  ru: "Отправьте /start, чтобы увидеть, что я умею."
}

/** What customers say once their answer arrives. */
export const thanks: ReadonlyArray<Line> = [
  { en: "Thank you!", ru: "Спасибо!" },
  { en: "Great, thanks a lot 🙏", ru: "Отлично, спасибо большое 🙏" },
  { en: "Got it, thanks!", ru: "Принято, спасибо!" },
  { en: "Perfect 👍", ru: "Супер 👍" }
]

/** What the staff say among themselves, not in reply to customers (so it never reaches one). */
export const chatter: ReadonlyArray<Line> = [
  { en: "Morning, team ☕", ru: "Всем доброе утро ☕" },
  { en: "I'll take the payment questions today.", ru: "Сегодня беру вопросы по оплате." },
  { en: "Heads up: the courier tracking is slow again.", ru: "Внимание: трекинг курьеров опять тормозит." },
  { en: "Lunch 13:00–13:30, can someone cover?", ru: "Ухожу на обед 13:00–13:30, подмените?" },
  { en: "Returns are up this week, mostly sizes.", ru: "На этой неделе больше возвратов, в основном размеры." },
  { en: "Reminder: sign replies with your name.", ru: "Напоминаю: подписывайте ответы именем." }
]

/** Short answers to a colleague's message. */
export const acknowledgements: ReadonlyArray<Line> = [
  { en: "👍", ru: "👍" },
  { en: "Sure, on it.", ru: "Ок, беру." },
  { en: "Thanks!", ru: "Спасибо!" }
]

/** The news channel's posts, in order, then again from the start. */
export const news: ReadonlyArray<string> = [
  "🚚 Free delivery on orders over 3,000 ₽ this weekend.",
  "Новое: пункты выдачи в Казани и Новосибирске.",
  "Our support team now answers every day, 9:00–21:00.",
  "Осенняя распродажа: −20% на верхнюю одежду до воскресенья.",
  "New in the shop: ceramic mugs in six colours ☕",
  "Оплата частями теперь доступна для заказов от 5 000 ₽.",
  "Tip: track any order with /start in our support bot."
]

/** What the extra people of `--chats` write to the news bot, once each. */
export const subscriberLines: ReadonlyArray<Line> = [
  { en: "Hi! Thanks for the news. When is the next sale?", ru: "Здравствуйте! Спасибо за новости. Когда следующая распродажа?" },
  { en: "How do I turn off notifications?", ru: "Как отключить уведомления?" },
  { en: "Do you deliver to my city?", ru: "А в мой город доставляете?" },
  { en: "Subscribed 🙂", ru: "Подписался 🙂" }
]

/** A line in the language, with `{first}` and `{order}` filled in. */
export const say = (line: Line, language: Language, fill: { readonly first?: string; readonly order?: string } = {}) =>
  line[language].replaceAll("{first}", fill.first ?? "").replaceAll("{order}", fill.order ?? "")
