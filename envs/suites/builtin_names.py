"""Word lists for the built-in suite's generator (:mod:`clarisql.envs.suites.builtin`).

Every name here is invented. Changing any list changes the generated suite, so bump
``builtin.GENERATOR_VERSION`` when editing this file.
"""

from __future__ import annotations

#: (display name, three-letter code used in parcel codes, region). The generator samples the
#: cities in the database from this pool; the rest serve as "no such city" surfaces.
CITY_POOL: tuple[tuple[str, str, str], ...] = (
    ("Riverton", "RVT", "Central Plains"),
    ("Lakemont", "LKM", "Lake Country"),
    ("Ashford Bay", "ASB", "East Coast"),
    ("Stonebridge", "STB", "Central Plains"),
    ("Westhaven", "WHV", "West Coast"),
    ("Maplewood", "MPW", "Northern Hills"),
    ("Northgate", "NGT", "Northern Hills"),
    ("Crescent Falls", "CRF", "River Valley"),
    ("Brookfield", "BRF", "River Valley"),
    ("Fairview", "FRV", "East Coast"),
    ("Kingsport", "KSP", "West Coast"),
    ("Elmstead", "ELM", "Lake Country"),
    ("Harrow Vale", "HRV", "Southern Uplands"),
    ("Silverton", "SVT", "Southern Uplands"),
)

#: Generic district names, shared between cities (so "the Central district" alone is ambiguous).
DISTRICT_POOL: tuple[str, ...] = (
    "Old Town",
    "Central",
    "Riverside",
    "Harbour",
    "University",
    "North Hills",
    "Eastgate",
    "West End",
    "Lakeside",
    "Station",
    "Market Square",
    "Greenfield",
    "Southbank",
    "Hillcrest",
    "Parkside",
    "Ironworks",
)

#: District-like names that no city in the database has (used for "Unmatch" surfaces).
UNMATCHED_DISTRICTS: tuple[str, ...] = (
    "Airport New Area",
    "Hi-Tech Zone",
    "Free Trade Zone",
    "Eco Valley",
    "Innovation Park",
    "Port New Town",
    "Logistics Park",
    "Science City",
)

#: industry -> business cores used to build enterprise names.
INDUSTRY_CORES: dict[str, tuple[str, ...]] = {
    "transport": ("Metro Transit", "Airport", "Bus Services", "Railway Investment", "Expressway"),
    "real estate": (
        "Urban Development",
        "Property",
        "Land & Housing",
        "Real Estate Development",
        "Urban Construction Investment",
        "Homes",
    ),
    "pharmaceuticals": ("Pharmaceutical", "Biotech", "Medical Devices", "Health Sciences"),
    "energy": ("Power", "Gas", "New Energy", "Water Supply", "Solar"),
    "manufacturing": ("Heavy Industries", "Precision Machinery", "Steel", "Auto Parts", "Glass"),
    "retail": ("Department Store", "Supermarket Chain", "Commerce", "Outlets"),
    "technology": ("Software", "Semiconductor", "Digital Technology", "Cloud Services"),
    "financial services": ("Securities", "Trust", "Insurance", "Leasing"),
    "logistics": ("Logistics", "Shipping", "Cold Chain", "Freight"),
    "food and beverage": ("Dairy", "Brewery", "Food", "Tea"),
    "media": ("Media", "Cable Network", "Publishing"),
}

#: How many enterprises of each industry the database holds (real estate ones are also the
#: property developers and land bidders).
INDUSTRY_COUNTS: dict[str, int] = {
    "transport": 5,
    "real estate": 14,
    "pharmaceuticals": 5,
    "energy": 5,
    "manufacturing": 6,
    "retail": 4,
    "technology": 5,
    "financial services": 4,
    "logistics": 4,
    "food and beverage": 4,
    "media": 3,
}

#: Brand words for enterprises that are not named after a city.
BRANDS: tuple[str, ...] = (
    "Evergreen",
    "Summit",
    "Bluewater",
    "Goldfield",
    "Silverline",
    "Northstar",
    "Pinecrest",
    "Redstone",
    "Brightpath",
    "Oakridge",
    "Sunhill",
    "Ironbridge",
    "Harborview",
    "Greenleaf",
    "Skyway",
    "Trinity",
    "Lumen",
    "Cedarline",
    "Falconer",
    "Horizon",
    "Meridian",
    "Keystone",
    "Westbrook",
    "Amberfield",
)

#: Legal suffixes of official enterprise names.
LEGAL_SUFFIXES: tuple[str, ...] = (
    "Group Co., Ltd.",
    "Holdings Co., Ltd.",
    "Co., Ltd.",
    "Group Corporation",
    "Industrial Group Co., Ltd.",
    "Development Co., Ltd.",
)

#: Project name parts: "<lead> <kind>[ <tail>]", e.g. "Jade Riverside Garden Residences Phase II".
PROJECT_LEADS: tuple[str, ...] = (
    "Lakeview",
    "Jade",
    "Maple",
    "Sunrise",
    "Emerald",
    "Willow",
    "Cedar",
    "Orchid",
    "Pearl",
    "Harmony",
    "Royal",
    "Golden Bay",
    "Silver Birch",
    "Crystal",
    "Bamboo",
    "Magnolia",
    "Azure",
    "Camellia",
    "Grand Canal",
    "Starlight",
)
PROJECT_KINDS: tuple[str, ...] = (
    "Garden",
    "Court",
    "Residences",
    "Heights",
    "Plaza",
    "Tower",
    "Mansion",
    "Villas",
    "Square",
    "Terrace",
    "Place",
    "Park",
)
PROJECT_TAILS: tuple[str, ...] = (
    "",
    "",
    "",
    "Phase II",
    "Phase III",
    "North Block",
    "Riverside Residences",
    "Garden Residences Phase II",
    "International Community",
)

PROPERTY_TYPES: tuple[str, ...] = ("residential", "commercial", "office")
SALE_STATUSES: tuple[str, ...] = ("completed", "pending", "cancelled")
LAND_USES: tuple[str, ...] = ("residential", "commercial", "industrial", "mixed-use")
AUCTION_STATUSES: tuple[str, ...] = ("sold", "unsold", "withdrawn")

#: Names for renamed developers in write tasks.
RENAMED_SUFFIXES: tuple[str, ...] = (
    "Urban Renewal Group Co., Ltd.",
    "City Services Holdings Co., Ltd.",
    "Living Group Co., Ltd.",
)
