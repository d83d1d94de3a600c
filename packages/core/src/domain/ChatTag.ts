import { Schema } from "effect"

const cssColorNames = new Set(
  (
    "aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue blueviolet brown burlywood " +
    "cadetblue chartreuse chocolate coral cornflowerblue cornsilk crimson cyan darkblue darkcyan darkgoldenrod darkgray " +
    "darkgreen darkgrey darkkhaki darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen " +
    "darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue dimgray dimgrey dodgerblue " +
    "firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite gold goldenrod gray green greenyellow grey honeydew " +
    "hotpink indianred indigo ivory khaki lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan " +
    "lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen lightskyblue " +
    "lightslategray lightslategrey lightsteelblue lightyellow lime limegreen linen magenta maroon mediumaquamarine " +
    "mediumblue mediumorchid mediumpurple mediumseagreen mediumslateblue mediumspringgreen mediumturquoise " +
    "mediumvioletred midnightblue mintcream mistyrose moccasin navajowhite navy oldlace olive olivedrab orange " +
    "orangered orchid palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru pink plum " +
    "powderblue purple rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown seagreen seashell sienna " +
    "silver skyblue slateblue slategray slategrey snow springgreen steelblue tan teal thistle tomato turquoise violet " +
    "wheat white whitesmoke yellow yellowgreen"
  ).split(" ")
)

/** A colour: `#rgb`, `#rrggbb` or a CSS colour name (any case), or empty for none. */
export const Color = Schema.String.pipe(
  Schema.filter((s) => s === "" || /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s) || cssColorNames.has(s.toLowerCase()), {
    message: () => "color must be #rgb, #rrggbb or a CSS colour name"
  })
)

/** A label on a user in a chat of a bot. Unique per (bot, chat, user, tag). */
export const Tag = Schema.Struct({
  id: Schema.Int,
  bot_id: Schema.Int,
  chat_id: Schema.Int,
  user_id: Schema.Int,
  username: Schema.String,
  tag: Schema.String,
  color: Schema.String,
  created_at: Schema.String
}).annotations({ identifier: "Tag" })
export type Tag = typeof Tag.Type

/** Body of `POST /api/tags/add`: the tag belongs to the bot `bot_id` names, which must be in the key's scope. */
export const NewTag = Schema.Struct({
  bot_id: Schema.Int.pipe(Schema.positive()),
  chat_id: Schema.Int,
  user_id: Schema.Int.pipe(Schema.positive()),
  username: Schema.optionalWith(
    Schema.String.pipe(Schema.maxLength(256, { message: () => "username must be at most 256 characters" })),
    { default: () => "" }
  ),
  tag: Schema.Trim.pipe(
    Schema.minLength(1, { message: () => "tag must not be empty" }),
    Schema.maxLength(64, { message: () => "tag must be at most 64 characters" })
  ),
  color: Schema.optionalWith(Color, { default: () => "" })
}).annotations({ identifier: "NewTag" })
export type NewTag = typeof NewTag.Type

/** What storage needs to assign a tag. */
export type TagRecordInput = Omit<Tag, "id">

/** No tag has this id. */
export class TagNotFound extends Schema.TaggedError<TagNotFound>()("TagNotFound", { id: Schema.Int }) {
  override get message() {
    return `tag ${this.id} not found`
  }
}
