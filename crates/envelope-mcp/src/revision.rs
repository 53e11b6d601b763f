//! Protocol revisions and what each can carry. (to be written)
