"""The request bank of the registry IF generator: our own request templates x our own topics.

Written for this project (no row of IFEval, IFBench or any other benchmark): a request is a short task on an
everyday topic, without commas, digits or the words the reference checkers count, so that the constraints composed
onto it decide what a correct answer looks like. ``SENTENCES``, ``BULLETS`` and ``PLACEHOLDERS`` are the material the
answer builder (``recipe.domains.if_registry_domain``) writes the SFT reference answers from. The data phase checks
every generated request against IFEval's and IFBench's prompts at the 13-gram level (``recipe.domains.if_decontam``).
"""
from __future__ import annotations

TEMPLATES = (
    "Write a short note about {topic}.",
    "Give some advice on {topic}.",
    "Describe {topic} for a school newsletter.",
    "Explain why {topic} matters to ordinary people.",
    "Write a brief guide to {topic} for a beginner.",
    "Share your thoughts on {topic}.",
    "Write a short message to a friend about {topic}.",
    "Tell me what to keep in mind about {topic}.",
    "Write a short post for a community board about {topic}.",
    "Summarize the main ideas behind {topic}.",
    "Write a few encouraging words for someone who is new to {topic}.",
    "Draft a short talk for a club meeting on {topic}.",
    "Write a short reflection on {topic}.",
    "Give a plain overview of {topic}.",
    "Write a friendly reminder about {topic}.",
    "Describe a typical weekend spent on {topic}.",
    "Write a short piece for a local paper on {topic}.",
    "Explain {topic} to a curious child.",
    "List what someone should know before starting with {topic}.",
    "Write a short product blurb for a kit about {topic}.",
)

TOPICS = (
    "growing tomatoes", "learning to swim", "saving money", "keeping a journal", "walking to work",
    "baking bread", "caring for a cat", "repairing a bicycle", "reading before bed", "visiting a museum",
    "planting a tree", "learning a new language", "cooking with beans", "cleaning the kitchen", "playing chess",
    "watching birds", "packing for a trip", "drinking enough water", "writing letters by hand", "sharing a garden",
    "fixing a leaky tap", "training a puppy", "sleeping well", "keeping bees", "taking the train",
    "painting a fence", "planning a picnic", "running a book club", "sewing a button", "building a birdhouse",
    "learning to juggle", "making soup", "recycling at home", "hiking in the hills", "studying for exams",
    "choosing a good tea", "looking after houseplants", "making friends in a new town", "stretching after exercise",
    "organizing a closet",
)

# Body sentences of the reference answers ({topic}: the request's topic). No commas, digits or quotation marks.
SENTENCES = (
    "{Topic} is easier than it first looks.",
    "A good first step is to learn the basics of {topic}.",
    "Small habits add up over time.",
    "Patience helps a great deal with {topic}.",
    "Many people find that {topic} brings them calm.",
    "Start slowly and build from there.",
    "Clear goals make progress easier to see.",
    "Ask someone with experience when you get stuck.",
    "Keep a little time each week for {topic}.",
    "Mistakes are part of learning and teach you a lot.",
    "The right tools make the work more pleasant.",
    "Notice what works for you and do more of it.",
    "Sharing {topic} with others makes it more fun.",
    "Rest matters as much as effort.",
    "Over a few weeks the results become easy to notice.",
    "Simple plans tend to last longer than complicated ones.",
)

BULLETS = (
    "Start small", "Keep notes", "Ask for help", "Set a simple goal", "Check your progress",
    "Take short breaks", "Share what you learn", "Enjoy the process",
)

PLACEHOLDERS = ("name", "date", "place", "time", "address", "phone")
